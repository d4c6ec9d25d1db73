"""P1-JOB: how a seeded stage-1 job row gates the next claim (fixtures/phase1/job_states.json)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memconform.checks.stage1 import VALID_OUTPUT, configure, job, requests_for
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output, message
from memconform.registry import check
from memconform.resources import fixture_json

CASES = fixture_json("phase1", "job_states.json")["cases"]
RELATIVE = re.compile(r"^(now|S)([+-]\d+)?$")


def resolve(value: Any, now: int, watermark: int) -> Any:
    """`now+600` / `S-100` → absolute seconds; anything else unchanged."""
    if not isinstance(value, str) or (match := RELATIVE.match(value)) is None:
        return value
    base = now if match.group(1) == "now" else watermark
    return base + int(match.group(2) or 0)


@check("p1.job.state", title="a seeded job row allows or blocks the claim, and the row moves "
       "exactly as the transition table says", rules=("P1-JOB-02", "P1-JOB-03", "P1-JOB-05",
                                                      "P1-JOB-06"), level="MUST", area="phase1")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_job_state(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock, case: dict[str, Any]) -> None:
    configure(home)
    thread = home.add_thread()
    watermark = thread.updated_at_ms // 1000
    seeded = {k: resolve(v, clock.now, watermark) for k, v in case["job"].items()}
    home.add_job("memory_stage1", thread.id, **seeded)
    before = job(home, thread.id)
    model.on("stage1", json_output(VALID_OUTPUT) if case.get("reply") == "valid"
             else message("not json at all"))
    run_startup(home)
    sent = len(requests_for(model, thread.id))
    row = job(home, thread.id)
    if case["claimed"]:
        assert sent == 1, "the thread was not extracted"
        assert row is not None and before is not None
        for column, expected in case["after"].items():
            assert row[column] == resolve(expected, clock.now, watermark), column
        assert row["ownership_token"] != before["ownership_token"], "claim kept the old token"
    else:
        assert sent == 0, "the thread was extracted although its job blocks the claim"
        assert row == before, "an unclaimed job row was modified"

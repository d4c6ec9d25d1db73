"""P1-JOB: how a seeded stage-1 job row gates the next claim (fixtures/phase1/job_states.json)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memconform.checks.stage1 import (
    MINUTE_MS,
    VALID_OUTPUT,
    configure,
    extracted_once,
    job,
    requests_for,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output, message
from memconform.registry import check
from memconform.resources import fixture_json

STATES = fixture_json("phase1", "job_states.json")
CASES = STATES["cases"]
BOUNDS = STATES["bounds"]
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
    run_case(home, model, run_startup, clock, case)


@check("p1.job.state-bounds", title="a backoff or lease ending one second after now still "
       "blocks the claim, also when now_ms is at .999 s", rules=("P1-JOB-02",),
       level="SHOULD", area="phase1", needs=("clock.inject",))
@pytest.mark.parametrize("case", BOUNDS, ids=[c["id"] for c in BOUNDS])
def test_job_state_bounds(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                          clock: HarnessClock, case: dict[str, Any]) -> None:
    run_case(home, model, run_startup, clock, case)


def run_case(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             clock: HarnessClock, case: dict[str, Any]) -> None:
    """Seed the case's job row (times relative to the clock's now, in whole seconds), move
    the clock by the case's `advance_s` if any, run one startup, and judge the claim."""
    configure(home)
    thread = home.add_thread()
    watermark = thread.updated_at_ms // 1000
    seeded = {k: resolve(v, clock.now, watermark) for k, v in case["job"].items()}
    home.add_job("memory_stage1", thread.id, **seeded)
    before = job(home, thread.id)
    if before is None:
        raise RuntimeError("the harness did not seed the stage-1 job row")
    # A blocked claim is proven against a plainly eligible control thread with no job row,
    # older than the case's thread, that the same startup must extract.
    control = None if case["claimed"] else home.add_thread(updated_ago_ms=150 * MINUTE_MS)
    model.on("stage1", json_output(VALID_OUTPUT) if case.get("reply", "valid") == "valid"
             else message("not json at all"))
    if case.get("advance_s"):
        clock.advance(case["advance_s"])  # now_ms gains milliseconds; clock.now is floored
    run_startup(home)
    if case["claimed"]:
        extracted_once(model, thread.id, "the thread whose job row allows the claim")
        row = job(home, thread.id)
        assert row is not None, "the claimed thread's job row was deleted"
        for column, expected in case["after"].items():
            assert row[column] == resolve(expected, clock.now, watermark), \
                f"after the claim and its {case['reply']} answer the job's {column} is wrong"
        assert row["ownership_token"] != before["ownership_token"], \
            "the claim kept the previous ownership token"
    else:
        assert len(requests_for(model, thread.id)) == 0, \
            "the thread was extracted although its job row blocks the claim"
        assert job(home, thread.id) == before, "the job row of a blocked claim was modified"
        if control is not None:
            extracted_once(model, control.id, "the control thread (eligible, no job row)")

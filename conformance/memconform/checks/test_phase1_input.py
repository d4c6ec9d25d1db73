"""P1-IN: what the extraction request contains and how it is shaped."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memconform.checks.stage1 import (
    VALID_OUTPUT,
    assert_now,
    configure,
    job,
    requests_for,
    user_text,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome, Thread
from memconform.mockmodel import MockModel, Recorded, json_output
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.rollout import message

FILTERING = fixture_json("phase1", "filtering.json")
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"rollout_summary": {"type": "string"},
                   "rollout_slug": {"type": ["string", "null"]},
                   "raw_memory": {"type": "string"}},
    "required": ["rollout_summary", "rollout_slug", "raw_memory"],
    "additionalProperties": False,
}
MARKER = re.compile("\u2026(\\d+) tokens truncated\u2026")


def extract(home: CodexHome, model: MockModel, run_startup: StartupRunner,
            memories: dict[str, Any] | None = None, top: dict[str, Any] | None = None,
            **thread: Any) -> tuple[Thread, Recorded]:
    configure(home, memories, top)
    seeded = home.add_thread(**thread)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    sent = requests_for(model, seeded.id)
    assert len(sent) == 1, f"expected one stage-1 request for the thread, got {len(sent)}"
    return seeded, sent[0]


@pytest.fixture
def filtered(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> str:
    _, request = extract(home, model, run_startup, lines=FILTERING["lines"],
                         meta_extra={"base_instructions": {"text": FILTERING["meta_marker"]}})
    return user_text(request)


@check("p1.in.kept", title="user, assistant, tool-call and tool-output items reach the "
       "extraction request", rules="P1-IN-01", level="MUST", area="phase1")
@pytest.mark.parametrize("marker", FILTERING["kept"])
def test_kept(filtered: str, marker: str) -> None:
    assert marker in filtered


@check("p1.in.dropped", title="developer messages, AGENTS.md and skill fragments, reasoning, "
       "events and context lines are dropped", rules="P1-IN-01", level="MUST", area="phase1")
@pytest.mark.parametrize("marker", FILTERING["dropped"])
def test_dropped(filtered: str, marker: str) -> None:
    assert marker not in filtered


@check("p1.in.request.shape", title="one user message, strict three-field JSON schema, no tools,"
       " low reasoning effort, streamed", rules="P1-IN-02", level="MUST", area="phase1")
def test_request_shape(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread, request = extract(home, model, run_startup)
    body = request.body
    text = user_text(request)
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True
    assert fmt["schema"] == OUTPUT_SCHEMA
    assert body.get("tools", []) == []
    assert body["reasoning"]["effort"] == "low"
    assert body["stream"] is True
    assert str(thread.rollout_path) in text, "the rollout path is not in the request"
    assert thread.cwd in text, "the rollout cwd is not in the request"


@check("p1.in.request.model", title="the extraction model is extract_model, else gpt-5.4-mini",
       rules=("P1-IN-02", "CFG-01"), level="MUST", area="phase1")
@pytest.mark.parametrize(("configured", "expected"), [(None, "gpt-5.4-mini"),
                                                      ("x-extract-model", "x-extract-model")],
                         ids=["default", "configured"])
def test_request_model(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       configured: str | None, expected: str) -> None:
    _, request = extract(home, model, run_startup, {"extract_model": configured})
    assert request.body["model"] == expected


CONTEXT_WINDOW = 20_000
BUDGET_BYTES = CONTEXT_WINDOW * 95 // 100 * 70 // 100 * 4  # 70 % of the effective window
BIG = "HEAD-MARK " + "a" * 100_000 + " MIDDLE-MARK " + "z" * 100_000 + " TAIL-MARK"


@check("p1.in.truncate", title="a rollout over 70 % of the context window is cut in the middle "
       "with a token marker", rules="P1-IN-03", level="MUST", area="phase1")
def test_truncated(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    _, request = extract(home, model, run_startup, top={"model_context_window": CONTEXT_WINDOW},
                         lines=[message("user", BIG), message("assistant", "done")])
    text = user_text(request)
    found = MARKER.findall(text)
    assert len(found) == 1, "expected exactly one truncation marker"
    assert "HEAD-MARK" in text and "TAIL-MARK" in text and "done" in text
    assert "MIDDLE-MARK" not in text
    size = len(MARKER.sub("", text).encode("utf-8"))
    assert BUDGET_BYTES <= size <= BUDGET_BYTES + 4096, f"kept {size} bytes"
    removed = int(found[0])
    assert (len(BIG) - BUDGET_BYTES) // 4 <= removed <= (len(BIG) + 2048 - BUDGET_BYTES) // 4 + 1


@check("p1.in.not-truncated", title="a rollout inside the budget is sent whole",
       rules="P1-IN-03", level="MUST", area="phase1")
def test_not_truncated(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    body = "HEAD-MARK " + "b" * 20_000 + " TAIL-MARK"
    _, request = extract(home, model, run_startup, top={"model_context_window": CONTEXT_WINDOW},
                         lines=[message("user", body)])
    text = user_text(request)
    assert not MARKER.search(text) and body in text


@check("p1.in.unreadable-rollout", title="a missing rollout file fails the job without a "
       "request", rules=("P1-IN-01", "P1-JOB-05"), level="MUST", area="phase1")
def test_missing_rollout(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         clock: HarnessClock) -> None:
    configure(home)
    thread = home.add_thread()
    thread.rollout_path.unlink()
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert requests_for(model, thread.id) == []
    row = job(home, thread.id)
    assert row is not None and row["status"] == "error" and row["retry_remaining"] == 2
    assert row["last_error"]
    assert_now(row["finished_at"], clock, "finished_at")

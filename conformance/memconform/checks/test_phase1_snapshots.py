"""Snapshots of what one successful extraction sends and stores, volatile fields masked.

Only what the spec pins is projected out of the request (no prompt wording, no cache keys),
and times are shown relative to the check's clock, so every conformant implementation matches.
"""

from __future__ import annotations

from typing import Any

from syrupy.assertion import SnapshotAssertion

from memconform.adapters import Adapter
from memconform.checks.stage1 import (
    VALID_OUTPUT,
    WALL_TOLERANCE_S,
    configure,
    extracted_once,
)
from memconform.clock import HarnessClock
from memconform.codex import releases
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.verdicts import fail

TIME_COLUMNS = ("started_at", "finished_at", "lease_until", "retry_at", "generated_at",
                "last_usage")


def relative(value: int | None, clock: HarnessClock) -> str | None:
    """`now`, `now+3600`, … (to the nearest minute without an injected clock)."""
    if value is None:
        return None
    delta = value - clock.now
    if not clock.injected:
        delta = round(delta / 60) * 60 if abs(delta) > WALL_TOLERANCE_S else 0
    return "now" if delta == 0 else f"now{delta:+d}"


def masked(row: dict[str, Any], clock: HarnessClock, thread_id: str, mark: int
           ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in sorted(row.items()):
        if key in TIME_COLUMNS:
            out[key] = relative(value, clock)
        elif key in ("worker_id", "ownership_token"):
            out[key] = None if value is None else f"<{key}>"
        elif value == thread_id:
            out[key] = "<thread>"
        elif key.endswith(("watermark", "source_updated_at")) and isinstance(value, int):
            out[key] = "S" if value == mark else f"S{value - mark:+d}"
        else:
            out[key] = value
    return out


def matches(snapshot: SnapshotAssertion, name: str, value: Any, sentence: str) -> None:
    """`value` matches the stored snapshot `name`; else fail with both serialized forms (the
    comparison is kept out of an `assert`, so the record shows data, not the assertion)."""
    if snapshot(name=name) == value:
        return
    result = snapshot.executions[snapshot.num_executions - 1]
    fail(sentence, expected=result.recalled_data, actual=result.asserted_data)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def request_shape(body: dict[str, Any], default_model: str) -> dict[str, Any]:
    """The pinned parts of an extraction request (the model as `<default>` when it is the
    followed release's default, which p1.in.request.model pins)."""
    fmt = dict(_object(_object(body.get("text")).get("format")))
    fmt.pop("name", None)
    model = body.get("model")
    return {
        "model": "<default>" if model == default_model else model,
        "stream": body.get("stream"),
        "tools": body.get("tools", []),
        "reasoning.effort": _object(body.get("reasoning")).get("effort"),
        "text.format": fmt,
        "input": [{"type": i.get("type"), "role": i.get("role"),
                   "content": [_object(p).get("type") for p in _list(i.get("content"))]}
                  for i in map(_object, _list(body.get("input")))],
    }


@check("p1.snap.extraction", title="one extraction: the request's pinned shape and the rows it "
       "leaves, as snapshots", rules=("P1-IN-02", "P1-OUT-02", "P1-JOB-03", "P1-JOB-04"),
       level="MUST", area="phase1", layout="v1")
def test_extraction_snapshot(impl: Adapter, home: CodexHome, model: MockModel,
                             run_startup: StartupRunner, clock: HarnessClock,
                             snapshot: SnapshotAssertion) -> None:
    default = releases.get(impl.handshake.follows[0]).stage1_model
    configure(home)
    thread = home.add_thread()
    mark = thread.updated_at_ms // 1000
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    request = extracted_once(model, thread.id)
    matches(snapshot, "request", request_shape(request.body, default),
            "the extraction request's pinned shape differs from the snapshot")
    stage1 = home.query(home.memories_db, "SELECT * FROM stage1_outputs")
    matches(snapshot, "stage1_outputs", [masked(r, clock, thread.id, mark) for r in stage1],
            "the stored stage1_outputs rows differ from the snapshot")
    job = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
    matches(snapshot, "stage1_job", [masked(r, clock, thread.id, mark) for r in job],
            "the stage-1 job row differs from the snapshot")


@check("p1.snap.failure", title="one failed extraction: the job row it leaves, as a snapshot",
       rules=("P1-JOB-05", "P1-OUT-01"), level="MUST", area="phase1")
def test_failure_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                          clock: HarnessClock, snapshot: SnapshotAssertion) -> None:
    configure(home)
    thread = home.add_thread()
    mark = thread.updated_at_ms // 1000
    model.on("stage1", json_output({**VALID_OUTPUT, "unexpected": True}))
    run_startup(home)
    extracted_once(model, thread.id)
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
    shown = [{**masked(r, clock, thread.id, mark), "last_error": bool(r["last_error"])}
             for r in rows]
    matches(snapshot, "stage1_job", shown, "the failed stage-1 job row differs from the snapshot")
    assert home.query(home.memories_db, "SELECT * FROM stage1_outputs") == [], \
        "a stage1_outputs row was written for a failed extraction"

"""Snapshots of what one successful extraction sends and stores, volatile fields masked.

Only what the spec pins is projected out of the request (no prompt wording, no cache keys),
and times are shown relative to the check's clock, so every conformant implementation matches.
"""

from __future__ import annotations

from typing import Any

from syrupy.assertion import SnapshotAssertion

from memconform.checks.stage1 import VALID_OUTPUT, WALL_TOLERANCE_S, configure, requests_for
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check

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


def request_shape(body: dict[str, Any]) -> dict[str, Any]:
    fmt = dict(body["text"]["format"])
    fmt.pop("name", None)
    return {
        "model": body.get("model"),
        "stream": body.get("stream"),
        "tools": body.get("tools", []),
        "reasoning.effort": (body.get("reasoning") or {}).get("effort"),
        "text.format": fmt,
        "input": [{"type": i.get("type"), "role": i.get("role"),
                   "content": [p.get("type") for p in i.get("content") or []]}
                  for i in body.get("input") or []],
    }


@check("p1.snap.extraction", title="one extraction: the request's pinned shape and the rows it "
       "leaves, as snapshots", rules=("P1-IN-02", "P1-OUT-02", "P1-JOB-03", "P1-JOB-04"),
       level="MUST", area="phase1")
def test_extraction_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                             clock: HarnessClock, snapshot: SnapshotAssertion) -> None:
    configure(home)
    thread = home.add_thread()
    mark = thread.updated_at_ms // 1000
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    [request] = requests_for(model, thread.id)
    assert request_shape(request.body) == snapshot(name="request")
    stage1 = home.query(home.memories_db, "SELECT * FROM stage1_outputs")
    assert [masked(r, clock, thread.id, mark) for r in stage1] == snapshot(name="stage1_outputs")
    job = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
    assert [masked(r, clock, thread.id, mark) for r in job] == snapshot(name="stage1_job")


@check("p1.snap.failure", title="one failed extraction: the job row it leaves, as a snapshot",
       rules=("P1-JOB-05", "P1-OUT-01"), level="MUST", area="phase1")
def test_failure_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                          clock: HarnessClock, snapshot: SnapshotAssertion) -> None:
    configure(home)
    thread = home.add_thread()
    mark = thread.updated_at_ms // 1000
    model.on("stage1", json_output({**VALID_OUTPUT, "unexpected": True}))
    run_startup(home)
    assert len(requests_for(model, thread.id)) == 1
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
    shown = [{**masked(r, clock, thread.id, mark), "last_error": bool(r["last_error"])}
             for r in rows]
    assert shown == snapshot(name="stage1_job")
    assert home.query(home.memories_db, "SELECT * FROM stage1_outputs") == []

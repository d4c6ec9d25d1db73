"""P2-JOB: the singleton consolidation job, through the optional `phase2.*` operations."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.clock import HarnessClock
from memconform.home import CodexHome
from memconform.registry import check

NEEDS = ("jobs.phase2", "clock.inject")
GLOBAL = "memory_consolidate_global"
RELATIVE = re.compile(r"^now([+-]\d+)?$")
CLAIMS = {
    # name: (seeded row or None, expected outcome, expected input watermark)
    "absent-row-is-created": (None, "claimed", 0),
    "retry-backoff": ({"status": "error", "retry_at": "now+600", "last_error": "failed_agent",
                       "finished_at": "now-60", "input_watermark": 7}, "skipped_retry_unavailable",
                      0),
    "live-lease": ({"status": "running", "ownership_token": "other", "worker_id": "w",
                    "lease_until": "now+600", "input_watermark": 7}, "skipped_running", 0),
    "success-cooldown": ({"status": "done", "finished_at": "now-60", "input_watermark": 7},
                         "skipped_cooldown", 0),
    "pending-work-still-cools-down": ({"status": "pending", "finished_at": "now-21000",
                                       "input_watermark": 9}, "skipped_cooldown", 0),
    "cooldown-over": ({"status": "done", "finished_at": "now-21601", "input_watermark": 7},
                      "claimed", 7),
    "failure-has-no-cooldown": ({"status": "error", "finished_at": "now-60",
                                 "last_error": "failed_agent", "input_watermark": 7},
                                "claimed", 7),
    "exhausted-budget-still-claims": ({"status": "error", "finished_at": "now-60",
                                       "last_error": "x", "retry_remaining": 0,
                                       "input_watermark": 3}, "claimed", 3),
    "expired-lease-taken-over": ({"status": "running", "ownership_token": "dead",
                                  "worker_id": "w", "lease_until": "now-1",
                                  "input_watermark": 300}, "claimed", 300),
}


def resolve(value: Any, now: int) -> Any:
    if isinstance(value, str) and (match := RELATIVE.match(value)):
        return now + int(match.group(1) or 0)
    return value


def claim(impl: Adapter, home: CodexHome, clock: HarnessClock, seed: int = 1) -> Any:
    return impl.call("phase2.claim", {"home": str(home.path), "worker_id": "worker",
                                      "now_ms": clock.now_ms, "seed": seed})


def finish(impl: Adapter, home: CodexHome, clock: HarnessClock, token: str, result: str,
           **extra: Any) -> bool:
    applied: bool = impl.call("phase2.finish", {"home": str(home.path), "token": token,
                                                "now_ms": clock.now_ms, "result": result,
                                                **extra})["applied"]
    return applied


def global_row(home: CodexHome) -> dict[str, Any]:
    [row] = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = ?", (GLOBAL,))
    return row


@check("p2.job.claim", title="the consolidation job is claimed unless in backoff, leased, or "
       "cooling down after a success", rules="P2-JOB-01", level="SHOULD", area="phase2",
       needs=NEEDS)
@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_claim(impl: Adapter, home: CodexHome, clock: HarnessClock, case: str) -> None:
    seeded, outcome, watermark = CLAIMS[case]
    home.ensure_memories_db()
    if seeded is not None:
        columns = {"retry_remaining": 3, **{k: resolve(v, clock.now) for k, v in seeded.items()}}
        home.add_job(GLOBAL, "global", **columns)
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    got = claim(impl, home, clock)
    assert got["outcome"] == outcome
    if outcome == "claimed":
        assert got["input_watermark"] == watermark
        row = global_row(home)
        assert row["status"] == "running" and row["ownership_token"] == got["token"]
        assert row["lease_until"] == clock.now + 3600 and row["retry_at"] is None
        assert row["last_error"] is None and row["finished_at"] is None
    else:
        assert got["token"] is None
        assert home.query(home.memories_db, "SELECT * FROM jobs") == before, "row modified"


@check("p2.job.success", title="success finishes the job and marks exactly the selected "
       "snapshots", rules=("P2-JOB-02", "P2-JOB-03"), level="SHOULD", area="phase2",
       needs=NEEDS)
def test_success(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.add_stage1_outputs([
        {"thread_id": "a", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 100},
        {"thread_id": "b", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 101},
        {"thread_id": "c", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 102,
         "selected_for_phase2": 1, "selected_for_phase2_source_updated_at": 90}])
    token = claim(impl, home, clock)["token"]
    assert finish(impl, home, clock, token, "succeeded", completed_watermark=101,
                  selected=[["a", 100], ["b", 99]])
    row = global_row(home)
    assert row["status"] == "done" and row["finished_at"] == clock.now
    assert row["lease_until"] is None and row["last_success_watermark"] == 101
    marks = {r["thread_id"]: (r["selected_for_phase2"], r["selected_for_phase2_source_updated_at"])
             for r in home.query(home.memories_db, "SELECT * FROM stage1_outputs")}
    assert marks == {"a": (1, 100), "b": (0, None), "c": (0, None)}
    assert claim(impl, home, clock, seed=2)["outcome"] == "skipped_cooldown"


@check("p2.job.failure", title="failure records the reason and a one-hour backoff, and never "
       "touches the selection", rules="P2-JOB-04", level="SHOULD", area="phase2", needs=NEEDS)
def test_failure(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.add_stage1_output("a", raw_memory="r", rollout_summary="s", source_updated_at=100,
                           selected_for_phase2=1, selected_for_phase2_source_updated_at=100)
    token = claim(impl, home, clock)["token"]
    assert finish(impl, home, clock, token, "failed", reason="failed_agent")
    row = global_row(home)
    assert row["status"] == "error" and row["last_error"] == "failed_agent"
    assert row["retry_at"] == clock.now + 3600 and row["retry_remaining"] == 2
    [out] = home.query(home.memories_db, "SELECT * FROM stage1_outputs")
    assert (out["selected_for_phase2"], out["selected_for_phase2_source_updated_at"]) == (1, 100)
    assert claim(impl, home, clock, seed=2)["outcome"] == "skipped_retry_unavailable"
    clock.advance(3601)
    assert claim(impl, home, clock, seed=3)["outcome"] == "claimed"


@check("p2.job.ownership", title="after a takeover the old owner can neither heartbeat nor "
       "finish", rules="P2-JOB-05", level="SHOULD", area="phase2", needs=NEEDS)
def test_ownership(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.ensure_memories_db()
    old = claim(impl, home, clock)["token"]
    clock.advance(600)
    assert impl.call("phase2.heartbeat", {"home": str(home.path), "token": old,
                                          "now_ms": clock.now_ms})["applied"] is True
    assert global_row(home)["lease_until"] == clock.now + 3600
    clock.advance(3601)
    new = claim(impl, home, clock, seed=2)
    assert new["outcome"] == "claimed" and new["token"] != old
    assert impl.call("phase2.heartbeat", {"home": str(home.path), "token": old,
                                          "now_ms": clock.now_ms})["applied"] is False
    assert finish(impl, home, clock, old, "succeeded", completed_watermark=5) is False
    assert finish(impl, home, clock, old, "failed", reason="late") is False
    assert global_row(home)["ownership_token"] == new["token"]
    assert finish(impl, home, clock, new["token"], "succeeded", completed_watermark=5)

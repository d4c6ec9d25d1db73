"""P2-JOB: the singleton consolidation job, through the optional `phase2.*` operations."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.clock import HarnessClock
from memconform.home import CodexHome
from memconform.registry import check
from memconform.verdicts import fail, only

NEEDS = ("jobs.phase2", "clock.inject")
GLOBAL = "memory_consolidate_global"
COOLDOWN_S = 21_600
LEASE_S = 3600
RETRY_DELAY_S = 3600
RELATIVE = re.compile(r"^now([+-]\d+)?$")
NO_ROW = "on a home with no consolidation job row"
CLAIMS = {
    # name: (seeded row or None, expected outcome, expected input watermark, the situation)
    "absent-row-is-created": (None, "claimed", 0, NO_ROW),
    "retry-backoff": ({"status": "error", "retry_at": "now+600", "last_error": "failed_agent",
                       "finished_at": "now-60", "input_watermark": 7}, "skipped_retry_unavailable",
                      0, "on a failed job whose retry_at is still ahead"),
    "live-lease": ({"status": "running", "ownership_token": "other", "worker_id": "w",
                    "lease_until": "now+600", "input_watermark": 7}, "skipped_running", 0,
                   "on a job running under another worker's live lease"),
    "success-cooldown": ({"status": "done", "finished_at": "now-60", "input_watermark": 7},
                         "skipped_cooldown", 0, "on a job that succeeded 60 s ago"),
    "pending-work-still-cools-down": ({"status": "pending", "finished_at": "now-21000",
                                       "input_watermark": 9}, "skipped_cooldown", 0,
                                      "on a pending job whose last success finished under six "
                                      "hours ago"),
    "cooldown-over": ({"status": "done", "finished_at": "now-21601", "input_watermark": 7},
                      "claimed", 7, "on a job that succeeded more than six hours ago"),
    "failure-has-no-cooldown": ({"status": "error", "finished_at": "now-60",
                                 "last_error": "failed_agent", "input_watermark": 7},
                                "claimed", 7, "on a job that failed 60 s ago with no retry_at"),
    "exhausted-budget-still-claims": ({"status": "error", "finished_at": "now-60",
                                       "last_error": "x", "retry_remaining": 0,
                                       "input_watermark": 3}, "claimed", 3,
                                      "on a failed job with no retries left"),
    "expired-lease-taken-over": ({"status": "running", "ownership_token": "dead",
                                  "worker_id": "w", "lease_until": "now-1",
                                  "input_watermark": 300}, "claimed", 300,
                                 "on a job whose running lease has expired"),
    # the bounds, to the second: "finished_at > now - 21600" is the cooldown, so a success
    # exactly six hours ago no longer holds the job; `retry_at > now` is the backoff and a
    # live lease is `lease_until > now` (P1-JOB-02), so both end at now itself
    "cooldown-ends-at-six-hours": ({"status": "done", "finished_at": "now-21600",
                                    "input_watermark": 7}, "claimed", 7,
                                   "on a job that succeeded exactly six hours (21 600 s) ago"),
    "cooldown-one-second-short": ({"status": "done", "finished_at": "now-21599",
                                   "input_watermark": 7}, "skipped_cooldown", 0,
                                  "on a job that succeeded 21 599 s ago"),
    "cooldown-one-second-short-at-999-ms": ({"status": "done", "finished_at": "now-21599",
                                             "input_watermark": 7}, "skipped_cooldown", 0,
                                            "at 999 ms past a whole second, on a job that "
                                            "succeeded 21 599 s before that second (now is "
                                            "rounded down, not to the nearest second)"),
    "retry-at-now-claims": ({"status": "error", "retry_at": "now", "finished_at": "now-3600",
                             "last_error": "failed_agent", "input_watermark": 7}, "claimed", 7,
                            "on a failed job whose retry_at is exactly now"),
    "lease-until-now-claims": ({"status": "running", "ownership_token": "other",
                                "worker_id": "w", "lease_until": "now", "input_watermark": 7},
                               "claimed", 7,
                               "on a running job whose lease_until is exactly now"),
    "retry-one-second-ahead-at-999-ms": ({"status": "error", "retry_at": "now+1",
                                          "finished_at": "now-3600",
                                          "last_error": "failed_agent", "input_watermark": 7},
                                         "skipped_retry_unavailable", 0,
                                         "at 999 ms past a whole second, on a failed job whose "
                                         "retry_at is the next second (now is rounded down)"),
    "lease-one-second-ahead-at-999-ms": ({"status": "running", "ownership_token": "other",
                                          "worker_id": "w", "lease_until": "now+1",
                                          "input_watermark": 7}, "skipped_running", 0,
                                         "at 999 ms past a whole second, on a running job whose "
                                         "lease ends the next second (now is rounded down)"),
    # both refusals hold: the backoff is tested first
    "backoff-before-live-lease": ({"status": "running", "ownership_token": "other",
                                   "worker_id": "w", "lease_until": "now+600",
                                   "retry_at": "now+600", "input_watermark": 7},
                                  "skipped_retry_unavailable", 0,
                                  "on a job both in its retry backoff and running under a live "
                                  "lease"),
}
# cases whose claim is sent this many seconds after the whole second the seeded row is
# relative to (the clock's `now` stays that second: Store rounds now_ms down)
ADVANCE_S = {"cooldown-one-second-short-at-999-ms": 0.999,
             "retry-one-second-ahead-at-999-ms": 0.999,
             "lease-one-second-ahead-at-999-ms": 0.999}
VERDICT = {"claimed": "did not claim the job",
           "skipped_retry_unavailable": "did not skip it for the retry backoff",
           "skipped_running": "did not skip it for the live lease",
           "skipped_cooldown": "did not skip it for the six-hour cooldown after a success"}


def resolve(value: Any, now: int) -> Any:
    if isinstance(value, str) and (match := RELATIVE.match(value)):
        return now + int(match.group(1) or 0)
    return value


def claim(impl: Adapter, home: CodexHome, clock: HarnessClock, seed: int = 1) -> dict[str, Any]:
    got: dict[str, Any] = impl.call("phase2.claim", {"home": str(home.path),
                                                     "worker_id": "worker",
                                                     "now_ms": clock.now_ms, "seed": seed})
    return got


def owned(got: dict[str, Any], situation: str) -> str:
    """The ownership token of a claim that had to succeed; none is the implementation's fail
    (it is never sent on to the next request)."""
    if not got["token"]:
        fail(f"phase2.claim {situation} returned no ownership token (outcome {got['outcome']})")
    return str(got["token"])


def finish(impl: Adapter, home: CodexHome, clock: HarnessClock, token: str, result: str,
           **extra: Any) -> bool:
    applied: bool = impl.call("phase2.finish", {"home": str(home.path), "token": token,
                                                "now_ms": clock.now_ms, "result": result,
                                                **extra})["applied"]
    return applied


def heartbeat(impl: Adapter, home: CodexHome, clock: HarnessClock, token: str) -> Any:
    return impl.call("phase2.heartbeat", {"home": str(home.path), "token": token,
                                          "now_ms": clock.now_ms})["applied"]


def global_row(home: CodexHome) -> dict[str, Any]:
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = ?", (GLOBAL,))
    return only(rows, f"{GLOBAL} job row")


@check("p2.job.claim", title="the consolidation job is claimed unless in backoff, leased, or "
       "cooling down after a success", rules="P2-JOB-01", level="SHOULD", area="phase2",
       needs=NEEDS)
@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_claim(impl: Adapter, home: CodexHome, clock: HarnessClock, case: str) -> None:
    seeded, outcome, watermark, situation = CLAIMS[case]
    home.ensure_memories_db()
    if case in ADVANCE_S:
        clock.advance(ADVANCE_S[case])
    if seeded is not None:
        columns = {"retry_remaining": 3, **{k: resolve(v, clock.now) for k, v in seeded.items()}}
        home.add_job(GLOBAL, "global", **columns)
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    got = claim(impl, home, clock)
    assert got["outcome"] == outcome, f"phase2.claim {situation} {VERDICT[outcome]}"
    if outcome == "claimed":
        token = owned(got, situation)
        assert got["input_watermark"] == watermark, \
            f"phase2.claim {situation} did not report the job's input watermark"
        row = global_row(home)
        assert row["status"] == "running", f"the job claimed {situation} is not running"
        assert row["ownership_token"] == token, \
            "the claimed job row does not carry the token the claim returned"
        assert row["lease_until"] == clock.now + LEASE_S, \
            "the claimed job's lease_until is not one hour from now"
        assert row["worker_id"] == "worker", \
            "the claimed job row does not carry the claiming worker's id in worker_id"
        assert row["started_at"] == clock.now, "the claimed job's started_at is not now"
        assert row["retry_at"] is None, "the claim did not clear the job's retry_at"
        assert row["last_error"] is None, "the claim did not clear the job's last_error"
        assert row["finished_at"] is None, "the claim did not clear the job's finished_at"
        return
    assert got["token"] is None, f"phase2.claim {situation} skipped the job but returned a token"
    assert home.query(home.memories_db, "SELECT * FROM jobs") == before, \
        f"phase2.claim {situation} skipped the job but changed the jobs table"
    if outcome == "skipped_cooldown":
        # The skip is the cooldown's: once six hours have passed since the success, it claims.
        assert seeded is not None
        clock.advance(resolve(seeded["finished_at"], 0) + COOLDOWN_S + 1)
        later = claim(impl, home, clock, seed=2)
        assert later["outcome"] == "claimed", \
            f"phase2.claim {situation} still did not claim the job once the six-hour cooldown " \
            "was over"


@check("p2.job.success", title="success finishes the job and marks exactly the selected "
       "snapshots", rules=("P2-JOB-02", "P2-JOB-03"), level="SHOULD", area="phase2",
       needs=NEEDS)
def test_success(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.add_stage1_outputs([
        {"thread_id": "a", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 100},
        {"thread_id": "b", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 101},
        {"thread_id": "c", "raw_memory": "r", "rollout_summary": "s", "source_updated_at": 102,
         "selected_for_phase2": 1, "selected_for_phase2_source_updated_at": 90}])
    token = owned(claim(impl, home, clock), NO_ROW)
    assert finish(impl, home, clock, token, "succeeded", completed_watermark=101,
                  selected=[["a", 100], ["b", 99]]), \
        "phase2.finish of a success by the job's owner was not applied"
    row = global_row(home)
    assert row["status"] == "done", "the succeeded job is not done"
    assert row["finished_at"] == clock.now, "the succeeded job's finished_at is not now"
    assert row["lease_until"] is None, "the succeeded job still holds its lease"
    assert row["last_success_watermark"] == 101, \
        "the succeeded job's last_success_watermark is not the completed watermark"
    marks = {r["thread_id"]: (r["selected_for_phase2"], r["selected_for_phase2_source_updated_at"])
             for r in home.query(home.memories_db, "SELECT * FROM stage1_outputs")}
    assert marks == {"a": (1, 100), "b": (0, None), "c": (0, None)}, \
        "the success did not mark exactly the selected snapshots that still exist (a at 100; " \
        "b was selected at an older snapshot, c not at all)"
    assert claim(impl, home, clock, seed=2)["outcome"] == "skipped_cooldown", \
        "a claim right after the success was not skipped for the six-hour cooldown"


@check("p2.job.failure", title="failure records the reason and a one-hour backoff, and never "
       "touches the selection", rules="P2-JOB-04", level="SHOULD", area="phase2", needs=NEEDS)
def test_failure(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.add_stage1_output("a", raw_memory="r", rollout_summary="s", source_updated_at=100,
                           selected_for_phase2=1, selected_for_phase2_source_updated_at=100)
    token = owned(claim(impl, home, clock), NO_ROW)
    assert finish(impl, home, clock, token, "failed", reason="failed_agent"), \
        "phase2.finish of a failure by the job's owner was not applied"
    row = global_row(home)
    assert row["status"] == "error", "the failed job is not in error"
    assert row["last_error"] == "failed_agent", "the failed job's last_error is not the reason"
    assert row["retry_at"] == clock.now + RETRY_DELAY_S, \
        "the failed job's retry_at is not one hour from now"
    assert row["retry_remaining"] == 2, "the failure did not spend exactly one retry"
    out = only(home.query(home.memories_db, "SELECT * FROM stage1_outputs"), "stage-1 output row")
    assert (out["selected_for_phase2"], out["selected_for_phase2_source_updated_at"]) == \
        (1, 100), "the failure changed the selection marks"
    assert claim(impl, home, clock, seed=2)["outcome"] == "skipped_retry_unavailable", \
        "a claim right after the failure was not skipped for the one-hour backoff"
    clock.advance(RETRY_DELAY_S + 1)
    assert claim(impl, home, clock, seed=3)["outcome"] == "claimed", \
        "the failed job was not claimed again once its one-hour backoff was over"


@check("p2.job.tokenless-failure", title="a failure matches the owner's token only: a running "
       "job whose token is gone is not failed by another token", rules=("P2-JOB-04", "P2-JOB-05"),
       level="SHOULD", area="phase2", needs=NEEDS)
def test_tokenless_failure(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.ensure_memories_db()
    home.add_job(GLOBAL, "global", status="running", worker_id="w", ownership_token=None,
                 started_at=clock.now, lease_until=clock.now + LEASE_S, retry_remaining=3)
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    assert finish(impl, home, clock, "not-the-owner", "failed", reason="failed_agent") is False, \
        "phase2.finish of a failure was applied to a running job whose ownership token is NULL"
    assert home.query(home.memories_db, "SELECT * FROM jobs") == before, \
        "phase2.finish of a failure by a token that does not own the job changed the job row"


@check("p2.job.ownership", title="after a takeover the old owner can neither heartbeat nor "
       "finish", rules="P2-JOB-05", level="SHOULD", area="phase2", needs=NEEDS)
def test_ownership(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.ensure_memories_db()
    old = owned(claim(impl, home, clock), NO_ROW)
    clock.advance(600)
    assert heartbeat(impl, home, clock, old) is True, \
        "the owner's heartbeat on its running job was not applied"
    assert global_row(home)["lease_until"] == clock.now + LEASE_S, \
        "the owner's heartbeat did not extend the lease to one hour from now"
    clock.advance(LEASE_S + 1)
    takeover = claim(impl, home, clock, seed=2)
    assert takeover["outcome"] == "claimed", \
        "phase2.claim on a job whose owner's lease has expired did not take it over"
    new = owned(takeover, "on a job whose owner's lease has expired")
    assert new != old, "the takeover claim returned the expired owner's token"
    assert heartbeat(impl, home, clock, old) is False, \
        "the old owner's heartbeat was applied after the takeover"
    assert finish(impl, home, clock, old, "succeeded", completed_watermark=5,
                  selected=[]) is False, \
        "the old owner's success was applied after the takeover"
    assert finish(impl, home, clock, old, "failed", reason="late") is False, \
        "the old owner's failure was applied after the takeover"
    assert global_row(home)["ownership_token"] == new, \
        "the job row no longer carries the new owner's token"
    assert finish(impl, home, clock, new, "succeeded", completed_watermark=5,
                  selected=[]), \
        "the new owner's success was not applied"


@check("p2.job.floored-now", title="at now_ms .999 s every time the consolidation job stores is "
       "now rounded down to whole seconds", rules=("P2-JOB-01", "P2-JOB-02", "P2-JOB-04",
                                                   "P2-JOB-05"),
       level="SHOULD", area="phase2", needs=NEEDS)
@pytest.mark.parametrize("step", ["claim", "heartbeat", "success", "failure"])
def test_floored_now(impl: Adapter, home: CodexHome, clock: HarnessClock, step: str) -> None:
    home.ensure_memories_db()
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    token = owned(claim(impl, home, clock), NO_ROW)
    if step == "heartbeat":
        clock.advance(600)
        assert heartbeat(impl, home, clock, token) is True, \
            "the owner's heartbeat on its running job was not applied"
    elif step == "success":
        assert finish(impl, home, clock, token, "succeeded", completed_watermark=5,
                      selected=[]), "phase2.finish of a success by the job's owner was not applied"
    elif step == "failure":
        assert finish(impl, home, clock, token, "failed", reason="failed_agent"), \
            "phase2.finish of a failure by the job's owner was not applied"
    row = global_row(home)
    if step in ("claim", "heartbeat"):
        if step == "claim":
            assert row["started_at"] == clock.now, \
                "started_at is not now_ms rounded down to seconds (.999 s must not round up)"
        assert row["lease_until"] == clock.now + LEASE_S, \
            "lease_until is not now_ms rounded down to seconds plus 3600"
        return
    assert row["finished_at"] == clock.now, \
        "finished_at is not now_ms rounded down to seconds (.999 s must not round up)"
    if step == "failure":
        assert row["retry_at"] == clock.now + RETRY_DELAY_S, \
            "retry_at is not now_ms rounded down to seconds plus one hour"


@check("p2.job.failure-budget", title="a failure spends one retry and an exhausted budget stays "
       "at zero", rules="P2-JOB-04", level="SHOULD", area="phase2", needs=NEEDS)
@pytest.mark.parametrize(("left", "after"), [(1, 0), (0, 0)], ids=["one-left", "none-left"])
def test_failure_budget(impl: Adapter, home: CodexHome, clock: HarnessClock, left: int,
                        after: int) -> None:
    home.ensure_memories_db()
    home.add_job(GLOBAL, "global", status="error", finished_at=clock.now - 60,
                 last_error="failed_agent", retry_remaining=left, input_watermark=3)
    token = owned(claim(impl, home, clock), f"on a failed job with {left} retries left")
    assert finish(impl, home, clock, token, "failed", reason="failed_agent"), \
        "phase2.finish of a failure by the job's owner was not applied"
    assert global_row(home)["retry_remaining"] == after, \
        f"a failure with {left} retries left did not leave retry_remaining at {after} (one " \
        "lower, never below zero)"

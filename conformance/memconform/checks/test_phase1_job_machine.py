"""P1-JOB: the stage-1 job table against a sequential model of its transition table.

Runs through the optional `stage1.claim` / `stage1.finish` operations with an injected clock,
so leases expire and backoffs elapse on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memconform.adapters import Adapter
from memconform.clock import HarnessClock
from memconform.home import CodexHome
from memconform.registry import check

NEEDS = ("jobs.stage1", "clock.inject")
LEASE_S, RETRY_DELAY_S, BUDGET, CAP = 3600, 3600, 3, 2
THREADS = ("thread-a", "thread-b", "thread-c")
OUTPUT = {"raw_memory": "r", "rollout_summary": "s", "rollout_slug": "job-machine"}
REASON = "model failed"


@dataclass
class Row:
    status: str
    token: str | None
    lease_until: int | None
    retry_at: int | None
    retry_remaining: int
    input_watermark: int
    last_success_watermark: int | None = None
    worker: str | None = None
    last_error: str | None = None


@dataclass
class Model:
    """The transition table of SPEC P1-JOB-01..06, written from the spec, not the code."""

    rows: dict[str, Row] = field(default_factory=dict)
    outputs: dict[str, int] = field(default_factory=dict)

    def claim(self, thread: str, mark: int, now: int) -> str:
        row = self.rows.get(thread)
        if self.outputs.get(thread, -1) >= mark or (
                row is not None and row.last_success_watermark is not None
                and row.last_success_watermark >= mark):
            return "skipped_up_to_date"
        live_others = sum(1 for key, r in self.rows.items() if key != thread
                          and r.status == "running" and r.lease_until is not None
                          and r.lease_until > now)
        if row is None:
            return "claimed" if live_others < CAP else "skipped_running"
        newer = mark > row.input_watermark
        live = row.status == "running" and row.lease_until is not None and row.lease_until > now
        if (not live and (row.retry_at is None or row.retry_at <= now or newer)
                and (row.retry_remaining > 0 or newer) and live_others < CAP):
            return "claimed"
        if row.retry_remaining <= 0:
            return "skipped_retry_exhausted"
        if row.retry_at is not None and row.retry_at > now:
            return "skipped_retry_backoff"
        return "skipped_running"

    def claimed(self, thread: str, mark: int, now: int, token: str, worker: str) -> None:
        old = self.rows.get(thread)
        newer = old is None or mark > old.input_watermark
        self.rows[thread] = Row("running", token, now + LEASE_S, None,
                                BUDGET if newer or old is None else old.retry_remaining, mark,
                                old.last_success_watermark if old else None, worker)

    def finish(self, thread: str, token: str, result: str, mark: int, now: int) -> bool:
        row = self.rows.get(thread)
        if row is None or row.status != "running" or row.token != token:
            return False
        if result == "failed":
            row.status, row.retry_at = "error", now + RETRY_DELAY_S
            row.retry_remaining -= 1
            row.last_error = REASON
        else:
            row.status, row.last_success_watermark = "done", row.input_watermark
            row.last_error = None
            if result == "succeeded":
                if mark >= self.outputs.get(thread, -1):
                    self.outputs[thread] = mark
            else:
                self.outputs.pop(thread, None)
        row.lease_until = None
        return True


def make_machine(impl: Adapter, home: CodexHome, clock: HarnessClock) -> type:
    class JobMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.model = Model()
            self.tokens: list[tuple[str, str, int]] = []
            self.seed = 0
            home.memories_db.unlink(missing_ok=True)
            for suffix in ("-wal", "-shm"):
                home.path.joinpath(home.memories_db.name + suffix).unlink(missing_ok=True)
            home.ensure_memories_db()

        @rule(thread=st.sampled_from(THREADS), worker=st.sampled_from(("w1", "w2", "w3")),
              mark=st.integers(100, 103))
        def claim(self, thread: str, worker: str, mark: int) -> None:
            self.seed += 1
            got = impl.call("stage1.claim", {
                "home": str(home.path), "thread_id": thread, "watermark": mark,
                "worker_id": worker, "now_ms": clock.now_ms, "seed": self.seed,
                "max_running": CAP})
            expected = self.model.claim(thread, mark, clock.now)
            assert got["outcome"] == expected, \
                f"stage1.claim of {thread} at watermark {mark} did not answer as the " \
                "transition table says"
            if expected == "claimed":
                token = got.get("token")
                assert token, f"stage1.claim of {thread} claimed it without a token"
                self.model.claimed(thread, mark, clock.now, token, worker)
                self.tokens.append((thread, token, mark))

        @precondition(lambda self: bool(self.tokens))
        @rule(pick=st.integers(0, 50), result=st.sampled_from(("succeeded", "no_output",
                                                               "failed")))
        def finish(self, pick: int, result: str) -> None:
            thread, token, mark = self.tokens[pick % len(self.tokens)]
            got = impl.call("stage1.finish", {
                "home": str(home.path), "thread_id": thread, "token": token,
                "now_ms": clock.now_ms, "result": result, "watermark": mark,
                "output": OUTPUT, "reason": REASON})
            applies = self.model.finish(thread, token, result, mark, clock.now)
            assert got["applied"] == applies, (
                f"stage1.finish ({result}) of {thread} by its owner was not applied" if applies
                else f"stage1.finish ({result}) of {thread} was applied although its token "
                "does not own a running job")
            if applies:
                [row] = home.query(home.memories_db, "SELECT finished_at FROM jobs WHERE kind ="
                                   " 'memory_stage1' AND job_key = ?", (thread,))
                assert row["finished_at"] == clock.now, \
                    f"stage1.finish ({result}) of {thread} did not set finished_at to now"

        @rule(seconds=st.sampled_from((1, 600, 3599, 3601, 7200)))
        def tick(self, seconds: int) -> None:
            clock.advance(seconds)

        @invariant()
        def table_matches_model(self) -> None:
            jobs = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = "
                              "'memory_stage1'")
            for thread in THREADS:
                rows = [job for job in jobs if job["job_key"] == thread]
                expected = self.model.rows.get(thread)
                if expected is None:
                    assert len(rows) == 0, f"a job row for {thread} exists although it was " \
                        "never claimed"
                    continue
                assert len(rows) == 1, f"no job row for {thread} although it was claimed"
                row = rows[0]
                seen = {k: row[k] for k in ("status", "lease_until", "retry_at",
                                            "retry_remaining", "input_watermark",
                                            "last_success_watermark")}
                seen["token"] = row["ownership_token"]
                seen["worker"] = row["worker_id"]
                seen["last_error"] = row["last_error"]
                assert seen == {**expected.__dict__}, \
                    f"the job row of {thread} is not what the transition table leads to"
            rows = home.query(home.memories_db, "SELECT thread_id, source_updated_at, "
                              "rollout_slug FROM stage1_outputs")
            stored = {r["thread_id"]: r["source_updated_at"] for r in rows}
            assert stored == self.model.outputs, \
                "the stage1_outputs rows (thread: source_updated_at) are not what the " \
                "finished jobs leave"
            slugs = {r["rollout_slug"] for r in rows} - {OUTPUT["rollout_slug"]}
            assert not slugs, "a stored output's rollout_slug is not the one its finish gave"

    return JobMachine


@check("p1.job.machine", title="random claim / finish / clock sequences follow the stage-1 "
       "transition table", rules=("P1-JOB-01", "P1-JOB-02", "P1-JOB-03", "P1-JOB-05",
                                  "P1-JOB-06"), level="SHOULD", area="phase1", needs=NEEDS)
def test_job_machine(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    machine = make_machine(impl, home, clock)
    run_state_machine_as_test(machine, settings=settings(
        max_examples=40, stateful_step_count=30, deadline=None, derandomize=True))


@check("p1.job.stale-token", title="a worker whose lease was taken over cannot commit",
       rules="P1-JOB-06", level="SHOULD", area="phase1", needs=NEEDS)
def test_stale_token(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    def claim(worker: str, seed: int) -> Any:
        return impl.call("stage1.claim", {
            "home": str(home.path), "thread_id": "t", "watermark": 100, "worker_id": worker,
            "now_ms": clock.now_ms, "seed": seed, "max_running": CAP})

    def finish(token: str, raw: str) -> bool:
        applied: bool = impl.call("stage1.finish", {
            "home": str(home.path), "thread_id": "t", "token": token, "now_ms": clock.now_ms,
            "result": "succeeded", "watermark": 100,
            "output": {**OUTPUT, "raw_memory": raw}})["applied"]
        return applied

    home.ensure_memories_db()
    first = claim("slow-worker", 1)
    assert first["outcome"] == "claimed", "the first claim of a new thread was refused"
    assert first["token"], "the first claim returned no ownership token"
    assert claim("eager-worker", 2)["outcome"] == "skipped_running", "a live lease was stolen"
    clock.advance(LEASE_S + 1)
    second = claim("eager-worker", 3)
    assert second["outcome"] == "claimed", "an expired lease was not re-claimable"
    assert second["token"], "the re-claim returned no ownership token"
    assert second["token"] != first["token"], "the re-claim kept the old ownership token"
    assert finish(first["token"], "late and stale") is False, "the stale owner committed"
    assert len(home.query(home.memories_db, "SELECT * FROM stage1_outputs")) == 0, \
        "the stale owner's output was stored"
    assert finish(second["token"], "fresh") is True, "the new owner could not commit"
    rows = home.query(home.memories_db, "SELECT raw_memory FROM stage1_outputs")
    assert rows == [{"raw_memory": "fresh"}], "the new owner's output is not the one stored"

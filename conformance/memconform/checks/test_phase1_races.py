"""P1-JOB-06 / P1-CAND-05: concurrent sessions on one home, and the session's own thread."""

from __future__ import annotations

from collections.abc import Callable

from memconform.adapters import Adapter
from memconform.checks.racing import race
from memconform.checks.stage1 import (
    VALID_OUTPUT,
    configure,
    extracted_once,
    job,
    output,
    requests_for,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check

SESSIONS = 4
CAP = 3


@check("p1.race.same-thread", title="sessions racing on one home extract a thread once",
       rules="P1-JOB-06", level="MUST", area="phase1")
def test_same_thread(home: CodexHome, model: MockModel, clock: HarnessClock,
                     impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT).after(0.3))
    race(home, clock, impl_pool(SESSIONS), seed=1000)
    extracted_once(model, thread.id, "the thread the sessions raced for")
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["status"] == "done", "the extracted thread's job is not done"
    assert output(home, thread.id) is not None, "the extracted thread's output was not stored"


@check("p1.race.many-threads", title="racing sessions never extract any thread twice and "
       "never exceed the running cap", rules="P1-JOB-06", level="MUST", area="phase1")
def test_many_threads(home: CodexHome, model: MockModel, clock: HarnessClock,
                      impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home, {"max_rollouts_per_startup": CAP})
    threads = [home.add_thread(updated_ago_ms=(2 * 60 + i) * 60_000) for i in range(8)]
    model.on("stage1", json_output(VALID_OUTPUT).after(0.2))
    race(home, clock, impl_pool(SESSIONS), seed=1000)
    counts = [len(requests_for(model, t.id)) for t in threads]
    assert sum(counts) > 0, "none of the eight eligible threads was extracted by the racing " \
        "sessions"
    assert [min(c, 1) for c in counts] == counts, \
        "a thread was extracted more than once by the racing sessions (requests per thread)"
    assert sum(counts) >= CAP, \
        "the racing sessions extracted fewer threads than one session's limit of 3"
    # each reply takes 0.2 s, so requests arriving within 0.2 s of one another ran together
    starts = sorted(r.at for r in model.of_kind("stage1"))
    overlap = max(sum(0 <= b - a < 0.2 for b in starts) for a in starts)
    assert overlap <= CAP, "more extractions ran at once than the running cap of 3"
    for thread, count in zip(threads, counts, strict=True):
        row = job(home, thread.id)
        if not count:
            assert row is None, "a job row was written for a thread that was not extracted"
            continue
        assert row is not None, "an extracted thread has no stage-1 job row"
        assert row["status"] == "done", "an extracted thread's job is not done"
        assert output(home, thread.id) is not None, "an extracted thread's output was not stored"


@check("p1.cand.current-thread", title="the running session's own thread is never a "
       "candidate", rules="P1-CAND-05", level="MUST", area="phase1")
def test_current_thread(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home, {"max_rollouts_per_startup": 5})
    own = home.add_thread(updated_ago_ms=2 * 3_600_000)
    other = home.add_thread(updated_ago_ms=3 * 3_600_000)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home, resume_thread_id=own.id)
    assert len(requests_for(model, own.id)) == 0, "the session's own thread was extracted"
    extracted_once(model, other.id, "the other eligible thread")

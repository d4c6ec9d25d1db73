"""P1-JOB-06 / P1-CAND-05: concurrent sessions on one home, and the session's own thread."""

from __future__ import annotations

from collections.abc import Callable

from memconform.adapters import Adapter
from memconform.checks.racing import race
from memconform.checks.stage1 import VALID_OUTPUT, configure, job, output, requests_for
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check

SESSIONS = 4



@check("p1.race.same-thread", title="sessions racing on one home extract a thread once",
       rules="P1-JOB-06", level="MUST", area="phase1")
def test_same_thread(home: CodexHome, model: MockModel, clock: HarnessClock,
                     impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT).after(0.3))
    race(home, clock, impl_pool(SESSIONS), seed=1000)
    assert len(requests_for(model, thread.id)) == 1, "the thread was extracted more than once"
    row = job(home, thread.id)
    assert row is not None and row["status"] == "done"
    assert output(home, thread.id) is not None


@check("p1.race.many-threads", title="racing sessions never extract any thread twice and "
       "never exceed the running cap", rules="P1-JOB-06", level="MUST", area="phase1")
def test_many_threads(home: CodexHome, model: MockModel, clock: HarnessClock,
                      impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home, {"max_rollouts_per_startup": 3})
    threads = [home.add_thread(updated_ago_ms=(2 * 60 + i) * 60_000) for i in range(8)]
    model.on("stage1", json_output(VALID_OUTPUT).after(0.2))
    race(home, clock, impl_pool(SESSIONS), seed=1000)
    counts = [len(requests_for(model, t.id)) for t in threads]
    assert max(counts) == 1, f"a thread was extracted twice: {counts}"
    assert 3 <= sum(counts) <= 8
    # each reply takes 0.2 s, so requests arriving within 0.2 s of one another ran together
    starts = sorted(r.at for r in model.of_kind("stage1"))
    overlap = max(sum(0 <= b - a < 0.2 for b in starts) for a in starts)
    assert overlap <= 3, f"{overlap} extractions ran at once; the cap is 3"
    for thread, count in zip(threads, counts, strict=True):
        row = job(home, thread.id)
        assert (row is not None) == bool(count), "job rows disagree with the requests sent"
        if row is not None:
            assert row["status"] == "done" and output(home, thread.id) is not None


@check("p1.cand.current-thread", title="the running session's own thread is never a "
       "candidate", rules="P1-CAND-05", level="MUST", area="phase1")
def test_current_thread(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home, {"max_rollouts_per_startup": 5})
    own = home.add_thread(updated_ago_ms=2 * 3_600_000)
    other = home.add_thread(updated_ago_ms=3 * 3_600_000)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home, resume_thread_id=own.id)
    assert requests_for(model, own.id) == [], "the session's own thread was extracted"
    assert len(requests_for(model, other.id)) == 1

"""P2-RUN-04, P2-RUN-07, P2-JOB-04: concurrent startups, a worker that loses the job mid-run, a
run whose job loses its token, and a run that crashed under its lease."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memconform.adapters import Adapter
from memconform.checks.consolidation import (
    DONE,
    GLOBAL,
    RAW,
    SUMMARIES,
    add_file,
    agent_finishes,
    agent_patches,
    commits,
    committed_files,
    configure,
    consolidations,
    global_job,
    inputs_listed,
    seed_memory,
    status,
)
from memconform.checks.racing import race
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, custom_tool_call, failed, message
from memconform.registry import check
from memconform.verdicts import fail

SESSIONS = 4


def baseline(root: Path) -> Path:
    """The memory root, which must be a git work tree by now (the run's baseline)."""
    if not (root / ".git").exists():
        state = "has no .git" if root.is_dir() else "was not created"
        fail(f"the memory root {state}: no consolidation baseline was committed ({root})")
    return root


@check("p2.race.one-agent", title="startups racing on one home run one consolidation agent "
       "and leave one clean baseline", rules="P2-RUN-07", level="MUST", area="phase2")
def test_one_agent(home: CodexHome, model: MockModel, clock: HarnessClock,
                   impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home)
    for age in (2, 3, 4):
        seed_memory(home, age_s=age * 3600)
    agent_finishes(model, message(DONE).after(0.3))
    race(home, clock, impl_pool(SESSIONS), seed=2000)
    assert consolidations(model) == 1, \
        f"{SESSIONS} startups racing on one home did not run exactly one consolidation agent"
    job = global_job(home)
    assert job is not None, "the racing startups left no memory_consolidate_global job row"
    assert job["status"] == "done", "the consolidation job is not done after the race"
    root = baseline(home.memory_root)
    assert len(commits(root)) == 1, \
        "the racing startups did not leave exactly one baseline commit in the memory root"
    committed = committed_files(root)
    assert set(inputs_listed(home, [RAW])) <= set(committed) and any(
        name.startswith(f"{SUMMARIES}/") for name in committed), \
        f"the baseline commit does not contain the synced inputs ({RAW} in layout v1, " \
        f"{SUMMARIES}/)"
    assert status(root) == "", "the memory root has uncommitted changes after the race"


def steal(home: CodexHome, clock: HarnessClock, stolen: list[int]) -> Callable[[], None]:
    def probe() -> None:
        changed = home.execute(
            home.memories_db, "UPDATE jobs SET ownership_token = 'thief', worker_id = 'thief',"
            " lease_until = ? WHERE kind = ? AND status = 'running'",
            (clock.now + 7200, GLOBAL))
        assert changed == 1, "the consolidation agent was started without a running " \
            "consolidation job row to take over"
        stolen.append(changed)
    return probe


def stolen_run(home: CodexHome, model: MockModel, run_startup: StartupRunner,
               clock: HarnessClock) -> None:
    """One startup whose job is taken over by another token while the agent's first reply
    (an apply_patch call adding MEMORY.md) is on its way; fails unless the takeover happened."""
    configure(home)
    seed_memory(home)
    stolen: list[int] = []
    patch = add_file("MEMORY.md", "# Memory\n- written by a stale worker")
    agent_patches(model, patch,
                  first=custom_tool_call("apply_patch", patch, "call_patch").probed(
                      steal(home, clock, stolen)))
    run_startup(home)
    if model.probe_errors:
        fail("the job could not be taken over while the agent ran: "
             + "; ".join(model.probe_errors))
    if not stolen:
        fail("no consolidation agent was started, so the job was never taken over mid-run",
             expected=1, actual=consolidations(model))


@check("p2.race.lost-ownership", title="a worker that lost the job mid-run resets no baseline "
       "and records nothing", rules="P2-RUN-04", level="MUST", area="phase2")
def test_lost_ownership(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                        clock: HarnessClock) -> None:
    stolen_run(home, model, run_startup, clock)
    job = global_job(home)
    assert job is not None, "the memory_consolidate_global job row was deleted"
    assert (job["status"], job["ownership_token"]) == ("running", "thief"), \
        "the stale worker wrote the job row after it was taken over"
    assert job["last_error"] is None, "the stale worker recorded a last_error on the job"
    assert job["finished_at"] is None, "the stale worker recorded a finished_at on the job"
    assert RAW not in committed_files(baseline(home.memory_root)), \
        "the stale worker reset the baseline after the job was taken over"


@check("p2.race.lost-ownership-writes", title="a worker that lost the job mid-run applies no "
       "further agent edits", rules="P2-RUN-04", level="SHOULD", area="phase2")
def test_lost_ownership_writes(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                               clock: HarnessClock) -> None:
    stolen_run(home, model, run_startup, clock)
    assert not (home.memory_root / "MEMORY.md").exists(), \
        "the stale worker's apply_patch edit landed: MEMORY.md was written after the job " \
        "was taken over"


def clear_token(home: CodexHome, cleared: list[int]) -> Callable[[], None]:
    def probe() -> None:
        cleared.append(home.execute(
            home.memories_db, "UPDATE jobs SET ownership_token = NULL WHERE kind = ?"
            " AND status = 'running'", (GLOBAL,)))
    return probe


@check("p2.race.tokenless-failure", title="a run whose job row lost its ownership token "
       "mid-run still records its failure", rules="P2-JOB-04", level="SHOULD", area="phase2")
def test_tokenless_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    cleared: list[int] = []
    agent_finishes(model, failed("the model broke").probed(clear_token(home, cleared)))
    run_startup(home)
    if not any(cleared):
        fail("no consolidation agent was started on a running job, so the job's ownership "
             "token was never cleared", expected=1, actual=consolidations(model))
    job = global_job(home)
    assert job is not None, "the memory_consolidate_global job row was deleted"
    assert job["status"] == "error", \
        f"the run whose agent failed after its job row lost its ownership token left the job " \
        f"{job['status']}, not error: the failure must also apply to a running job without a token"
    assert job["last_error"] == "failed_agent", \
        "the failed run did not record failed_agent on the job that had lost its token"


@check("p2.race.crashed-run", title="a run that died under its lease is taken over once the "
       "lease has expired", rules=("P2-RUN-07", "P2-JOB-05"), level="MUST", area="phase2")
def test_crashed_run(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    home.add_job(GLOBAL, "global", status="running", worker_id="dead", ownership_token="dead",
                 started_at=clock.now - 3700, lease_until=clock.now - 100, input_watermark=3,
                 last_success_watermark=0)
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 1, \
        "the startup did not run one consolidation agent on the job whose lease had expired"
    job = global_job(home)
    assert job is not None, "the memory_consolidate_global job row was deleted"
    assert job["status"] == "done", "the job taken over from the crashed run is not done"
    assert job["ownership_token"] != "dead", \
        "the job still carries the crashed run's ownership token"
    assert status(baseline(home.memory_root)) == "", \
        "the memory root has uncommitted changes after the takeover run"

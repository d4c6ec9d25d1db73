"""P2-RUN-04, P2-RUN-07: concurrent startups, a worker that loses the job mid-run, and a run
that crashed under its lease."""

from __future__ import annotations

from collections.abc import Callable

from memconform.adapters import Adapter
from memconform.checks.consolidation import (
    DONE,
    GLOBAL,
    RAW,
    add_file,
    agent_finishes,
    agent_patches,
    commits,
    committed_files,
    configure,
    consolidations,
    global_job,
    seed_memory,
    status,
)
from memconform.checks.racing import race
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, custom_tool_call, message
from memconform.registry import check

SESSIONS = 4



@check("p2.race.one-agent", title="startups racing on one home run one consolidation agent "
       "and leave one clean baseline", rules="P2-RUN-07", level="MUST", area="phase2")
def test_one_agent(home: CodexHome, model: MockModel, clock: HarnessClock,
                   impl_pool: Callable[[int], list[Adapter]]) -> None:
    configure(home)
    for age in (2, 3, 4):
        seed_memory(home, age_s=age * 3600)
    agent_finishes(model, message(DONE).after(0.3))
    race(home, clock, impl_pool(SESSIONS), seed=2000)
    assert consolidations(model) == 1, f"{consolidations(model)} agents ran"
    job = global_job(home)
    assert job is not None and job["status"] == "done", f"job: {job}"
    root = home.memory_root
    assert len(commits(root)) == 1 and RAW in committed_files(root)
    assert status(root) == ""


def steal(home: CodexHome, clock: HarnessClock) -> Callable[[], None]:
    def probe() -> None:
        changed = home.execute(
            home.memories_db, "UPDATE jobs SET ownership_token = 'thief', worker_id = 'thief',"
            " lease_until = ? WHERE kind = ? AND status = 'running'",
            (clock.now + 7200, GLOBAL))
        assert changed == 1, "no running consolidation job to take over"
    return probe


def stolen_run(home: CodexHome, model: MockModel, run_startup: StartupRunner,
               clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    patch = add_file("MEMORY.md", "# Memory\n- written by a stale worker")
    agent_patches(model, patch,
                  first=custom_tool_call("apply_patch", patch, "call_patch").probed(
                      steal(home, clock)))
    run_startup(home)
    assert not model.probe_errors, model.probe_errors


@check("p2.race.lost-ownership", title="a worker that lost the job mid-run resets no baseline "
       "and records nothing", rules="P2-RUN-04", level="MUST", area="phase2")
def test_lost_ownership(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                        clock: HarnessClock) -> None:
    stolen_run(home, model, run_startup, clock)
    job = global_job(home)
    assert job is not None
    assert (job["status"], job["ownership_token"]) == ("running", "thief"), \
        f"the stale worker wrote the job row: {job}"
    assert job["last_error"] is None and job["finished_at"] is None
    assert RAW not in committed_files(home.memory_root), "the stale worker reset the baseline"


@check("p2.race.lost-ownership-writes", title="a worker that lost the job mid-run applies no "
       "further agent edits", rules="P2-RUN-04", level="SHOULD", area="phase2")
def test_lost_ownership_writes(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                               clock: HarnessClock) -> None:
    stolen_run(home, model, run_startup, clock)
    assert not (home.memory_root / "MEMORY.md").exists(), "the stale worker's edit landed"


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
    assert consolidations(model) == 1
    job = global_job(home)
    assert job is not None and job["status"] == "done" and job["ownership_token"] != "dead"
    assert status(home.memory_root) == ""

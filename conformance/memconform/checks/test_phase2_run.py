"""P2-RUN: one consolidation attempt end to end: when it runs, how it fails, what a success
and a no-change success record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memconform.checks.consolidation import (
    DONE,
    RAW,
    SUMMARIES,
    agent_finishes,
    commits,
    committed_files,
    configure,
    consolidations,
    expire_cooldown,
    global_job,
    marks,
    one_memory_run,
    seed_memory,
    status,
)
from memconform.checks.stage1 import VALID_OUTPUT, assert_now
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import (
    MockModel,
    Reply,
    custom_tool_call,
    cut_stream,
    failed,
    http_error,
    json_output,
    message,
)
from memconform.registry import check

GLOBAL = "memory_consolidate_global"
HOUR_S = 3600


def job(home: CodexHome) -> dict[str, Any]:
    row = global_job(home)
    assert row is not None, "no consolidation job row"
    return row


@check("p2.run.no-change", title="an unchanged workspace is a success without any model "
       "request, and it restarts the cooldown", rules="P2-RUN-02", level="MUST", area="phase2")
def test_no_change(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock) -> None:
    thread = one_memory_run(home, model, run_startup)
    assert job(home)["status"] == "done"
    baseline = commits(home.memory_root)
    expire_cooldown(home)
    home.update_stage1_output(thread, selected_for_phase2=0,
                              selected_for_phase2_source_updated_at=None)
    model.reset()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "an agent ran although nothing changed"
    row = job(home)
    assert row["status"] == "done" and row["last_error"] is None
    assert_now(row["finished_at"], clock, "finished_at")
    assert commits(home.memory_root) == baseline, "the baseline was rewritten"
    assert marks(home)[thread][0] == 1, "the no-change success did not mark the selection"
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    run_startup(home)
    assert consolidations(model) == 0
    assert home.query(home.memories_db, "SELECT * FROM jobs") == before, \
        "the cooldown did not hold after a no-change success"


SKIPS: dict[str, dict[str, Any]] = {
    "cooldown": {"status": "done", "finished_at": -60},
    "backoff": {"status": "error", "finished_at": -60, "retry_at": 600,
                "last_error": "failed_agent"},
    "live-lease": {"status": "running", "ownership_token": "other", "worker_id": "w",
                   "started_at": -60, "lease_until": 600},
}


@check("p2.run.skipped", title="a job in cooldown, backoff or under a live lease is left "
       "alone: no files, no request, no row change", rules=("P2-RUN-01", "P2-JOB-01"),
       level="MUST", area="phase2")
@pytest.mark.parametrize("case", sorted(SKIPS))
def test_skipped(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 clock: HarnessClock, case: str) -> None:
    configure(home)
    seed_memory(home)
    times = ("finished_at", "retry_at", "lease_until", "started_at")
    home.add_job(GLOBAL, "global", input_watermark=1, last_success_watermark=0,
                 **{k: clock.now + v if k in times else v for k, v in SKIPS[case].items()})
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0
    assert not (home.memory_root / RAW).exists(), "inputs were written without a claim"
    assert home.query(home.memories_db, "SELECT * FROM jobs") == before


def raw_memories_is_a_directory(home: CodexHome) -> None:
    (home.memory_root / RAW / "x").mkdir(parents=True)


def summaries_is_a_file(home: CodexHome) -> None:
    home.memory_root.mkdir(parents=True)
    (home.memory_root / SUMMARIES).write_text("x")


BREAKERS: dict[str, Callable[[CodexHome], None]] = {
    "raw-memories-is-a-directory": raw_memories_is_a_directory,
    "summaries-is-a-file": summaries_is_a_file,
}


def assert_failed(home: CodexHome, clock: HarnessClock, reason: str,
                  marks_before: dict[str, Any]) -> None:
    row = job(home)
    assert row["status"] == "error", f"job: {row}"
    assert row["last_error"] == reason
    assert row["retry_remaining"] == 2 and row["lease_until"] is None
    assert_now(row["finished_at"], clock, "finished_at")
    assert row["retry_at"] is not None and row["retry_at"] - row["finished_at"] == HOUR_S
    assert marks(home) == marks_before, "a failure touched the selection marks"


@check("p2.run.sync-failure", title="inputs that cannot be written fail the run as "
       "failed_sync_workspace_inputs, before any agent", rules="P2-RUN-01", level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", sorted(BREAKERS))
def test_sync_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      clock: HarnessClock, case: str) -> None:
    configure(home)
    seed_memory(home, selected_for_phase2=0)
    BREAKERS[case](home)
    before = marks(home)
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "an agent ran after the sync failed"
    assert_failed(home, clock, "failed_sync_workspace_inputs", before)


AGENT_FAILURES: dict[str, Reply] = {
    "http-500": http_error(500),
    "http-429": http_error(429, '{"error": {"message": "slow down"}}'),
    "response-failed": failed("the model broke"),
    "cut-stream": cut_stream(message(DONE)),
}


@check("p2.run.agent-failure", title="an agent whose model call fails is a failure "
       "(failed_agent), not a success", rules=("P2-RUN-05", "P2-RUN-01"), level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", sorted(AGENT_FAILURES))
def test_agent_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       clock: HarnessClock, case: str) -> None:
    configure(home)
    thread = seed_memory(home)
    [row] = home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs")
    home.update_stage1_output(thread, selected_for_phase2=1,
                              selected_for_phase2_source_updated_at=row["source_updated_at"])
    before = marks(home)
    agent_finishes(model, AGENT_FAILURES[case])
    run_startup(home)
    assert consolidations(model) >= 1, "no agent ran"
    assert_failed(home, clock, "failed_agent", before)
    assert RAW not in committed_files(home.memory_root)


@check("p2.run.retry-after-failure", title="a failed run is retried by a startup after the "
       "one-hour backoff and then succeeds", rules=("P2-RUN-01", "P2-JOB-01"), level="MUST",
       area="phase2")
def test_retry_after_failure(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup, http_error(500))
    assert job(home)["status"] == "error"
    model.reset()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "retried inside the backoff"
    home.execute(home.memories_db, "UPDATE jobs SET retry_at = retry_at - 3601, finished_at = "
                 "finished_at - 3601 WHERE kind = ?", (GLOBAL,))
    run_startup(home)
    row = job(home)
    assert consolidations(model) == 1 and row["status"] == "done", f"job: {row}"
    assert status(home.memory_root) == ""


@check("p2.run.agent-turn-bound", title="an agent that never stops calling tools is stopped "
       "and the run fails", rules=("AGENT-04", "P2-RUN-05"), level="SHOULD", area="phase2")
def test_agent_turn_bound(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    bad = "*** Begin Patch\n*** Delete File: no-such-file.md\n*** End Patch\n"
    model.on("consolidation", *([custom_tool_call("apply_patch", bad, "call_loop")] * 100),
             message(DONE))
    run_startup(home)
    assert len(model.of_kind("consolidation")) < 100, "the tool loop was not bounded"
    assert job(home)["last_error"] == "failed_agent"


WATERMARKS = {
    # name: (claimed input watermark offset, selected source offsets, previous last success,
    #        expected last_success offset); offsets in seconds from now, None = absolute 0
    "claimed-is-higher": (1000, [-7200], 0, 1000),
    "selection-is-newer": (-90_000, [-7200, -10_800], 0, -7200),
    "empty-selection-keeps-claimed": (-5000, [], 0, -5000),
    "never-decreases": (-90_000, [-7200], 500, 500),
}


@check("p2.run.completion-watermark", title="last_success_watermark = max(claimed input "
       "watermark, newest selected source time), never lower than before", rules="P2-RUN-03",
       level="MUST", area="phase2")
@pytest.mark.parametrize("case", sorted(WATERMARKS))
def test_completion_watermark(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                              clock: HarnessClock, case: str) -> None:
    claimed, sources, previous, expected = WATERMARKS[case]
    configure(home)
    home.ensure_state_db()
    for offset in sources:
        seed_memory(home, age_s=-offset)
    home.add_job(GLOBAL, "global", status="done", finished_at=clock.now - 30_000,
                 input_watermark=clock.now + claimed,
                 last_success_watermark=clock.now + previous if previous else 0)
    agent_finishes(model)
    run_startup(home)
    row = job(home)
    assert row["status"] == "done", f"job: {row}"
    newest = max([r["source_updated_at"] for r in home.query(
        home.memories_db, "SELECT source_updated_at FROM stage1_outputs")], default=0)
    if clock.injected:
        assert newest == (clock.now + max(sources) if sources else 0)
    # with the wall clock a source time may land a second off; the table's offset holds
    # whenever the seeded times are exact
    want = clock.now + expected if clock.injected else max(
        clock.now + claimed, newest, clock.now + previous if previous else 0)
    assert row["last_success_watermark"] == want


@check("p2.run.without-data", title="a home without any stage-1 data still gets a first "
       "consolidation with the placeholder inputs", rules=("P2-RUN-06", "FS-02"), level="MUST",
       area="phase2")
def test_without_data(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 1, "no first consolidation"
    row = job(home)
    assert row["status"] == "done" and row["last_success_watermark"] == 0
    assert RAW in committed_files(home.memory_root)


@check("p2.run.cooldown-despite-new-input", title="new stage-1 output during the cooldown "
       "waits: the job is re-armed but no agent runs", rules=("P2-RUN-02", "P2-JOB-01"),
       level="MUST", area="phase2")
def test_cooldown_despite_new_input(home: CodexHome, model: MockModel,
                                    run_startup: StartupRunner, clock: HarnessClock) -> None:
    configure(home)
    home.add_job(GLOBAL, "global", status="done", finished_at=clock.now - 60,
                 input_watermark=5, last_success_watermark=5)
    fresh = home.add_thread(updated_ago_ms=2 * HOUR_S * 1000)
    model.on("stage1", json_output(VALID_OUTPUT))
    agent_finishes(model)
    run_startup(home)
    assert model.of_kind("stage1"), "the fresh thread was not extracted"
    assert consolidations(model) == 0, "the cooldown was ignored"
    row = job(home)
    assert row["input_watermark"] >= fresh.updated_at_ms // 1000
    assert not (home.memory_root / RAW).exists()


@check("p2.run.selected-survive-pruning", title="rows of the last successful selection are "
       "not pruned even when they fall out of the unused window", rules=("P2-RUN-02",
                                                                         "RET-01"),
       level="MUST", area="phase2")
def test_selected_survive_pruning(home: CodexHome, model: MockModel,
                                  run_startup: StartupRunner) -> None:
    thread = one_memory_run(home, model, run_startup)
    assert marks(home)[thread][0] == 1
    configure(home, {"max_unused_days": 0})
    expire_cooldown(home)
    run_startup(home)
    assert thread in marks(home), "a selected row was pruned"
    assert job(home)["status"] == "done"
    assert marks(home)[thread] == (0, None), "the out-of-window row is still marked selected"
    assert not any(p.name.endswith(".md") for p in (home.memory_root / SUMMARIES).iterdir())

"""P2-RUN: one consolidation attempt end to end: when it runs, how it fails, what a success
and a no-change success record."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memconform import fixtures
from memconform.checks.consolidation import (
    DIFF_FILE,
    DONE,
    EMPTY_RAW,
    RAW,
    SUMMARIES,
    add_file,
    agent_finishes,
    agent_patches,
    commits,
    committed_files,
    configure,
    consolidations,
    diff_status,
    expire_cooldown,
    git,
    global_job,
    marks,
    one_memory_run,
    seed_memory,
    status,
)
from memconform.checks.stage1 import VALID_OUTPUT, assert_now, requests_for
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
from memconform.verdicts import fail

GLOBAL = "memory_consolidate_global"
HOUR_S = 3600


def job(home: CodexHome, what: str = "the consolidation") -> dict[str, Any]:
    row = global_job(home)
    if row is None:
        fail(f"{what} did not run: there is no memory_consolidate_global job row")
    return row


def _done(home: CodexHome, what: str) -> dict[str, Any]:
    row = job(home, what)
    assert row["status"] == "done", f"{what} did not leave the consolidation job done"
    return row


def _workspace(home: CodexHome, when: str) -> Path:
    """The memory root, a git repository with a commit; anything else is a fail."""
    root = home.memory_root
    if not root.is_dir():
        fail(f"{when}, the memory root does not exist")
    if not (root / ".git").exists():
        fail(f"{when}, the memory root is not a git repository (no .git)")
    try:
        git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    except AssertionError:  # git refused: no commit, or unusable metadata
        fail(f"{when}, the memory root's git repository has no commit, or its metadata is "
             "unusable")
    return root


def _mark(home: CodexHome, thread: str, when: str) -> tuple[int, int | None]:
    current = marks(home)
    if thread not in current:
        fail(f"{when}, the thread's stage1_outputs row is gone")
    return current[thread]


@check("p2.run.no-change", title="an unchanged workspace is a success without any model "
       "request, and it restarts the cooldown", rules="P2-RUN-02", level="MUST", area="phase2")
def test_no_change(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock) -> None:
    thread = one_memory_run(home, model, run_startup)
    _done(home, "the first consolidation")
    baseline = commits(_workspace(home, "after the first consolidation"))
    expire_cooldown(home)
    home.update_stage1_output(thread, selected_for_phase2=0,
                              selected_for_phase2_source_updated_at=None)
    model.reset()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "an agent ran although nothing changed"
    row = _done(home, "the no-change startup")
    assert row["last_error"] is None, "the no-change success records a last_error"
    assert_now(row["finished_at"], clock, "finished_at of the no-change success")
    assert commits(_workspace(home, "after the no-change success")) == baseline, \
        "the no-change success rewrote the baseline commit"
    assert _mark(home, thread, "after the no-change success")[0] == 1, \
        "the no-change success did not mark the selection"
    before = home.query(home.memories_db, "SELECT * FROM jobs")
    run_startup(home)
    assert consolidations(model) == 0, \
        "a startup right after the no-change success started an agent"
    assert home.query(home.memories_db, "SELECT * FROM jobs") == before, \
        "the cooldown did not hold after a no-change success: the job rows changed"


@check("p2.run.no-change-floored-now", title="at now_ms .999 s the no-change success stores "
       "finished_at as now rounded down to whole seconds", rules="P2-RUN-02", level="SHOULD",
       area="phase2", needs=("clock.inject",))
def test_no_change_floored_now(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                               clock: HarnessClock) -> None:
    one_memory_run(home, model, run_startup)
    _done(home, "the first consolidation")
    expire_cooldown(home)
    model.reset()
    agent_finishes(model)
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    run_startup(home)
    assert consolidations(model) == 0, "an agent ran although nothing changed"
    row = _done(home, "the no-change startup")
    assert row["finished_at"] == clock.now, "finished_at of the no-change success is not " \
        "now_ms rounded down to seconds (.999 s must not round up)"


LEASE_BOUNDS: dict[str, tuple[float, int, bool]] = {
    # case: (seconds the clock moves on first, lease_until minus the floored now, claimed)
    "lease-ends-in-one-second": (0, 1, False),
    "lease-ends-in-one-second-at-999ms": (0.999, 1, False),
    "lease-ends-now": (0, 0, True),
    "lease-ends-now-at-999ms": (0.999, 0, True),
}


@check("p2.run.lease-bound", title="a startup leaves a running job whose lease ends one second "
       "after now alone and takes over one whose lease ends now, also at now_ms .999 s",
       rules=("P2-RUN-07", "P2-JOB-01"), level="SHOULD", area="phase2",
       needs=("clock.inject",))
@pytest.mark.parametrize("case", sorted(LEASE_BOUNDS))
def test_lease_bound(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     clock: HarnessClock, case: str) -> None:
    advance, lease, claimed = LEASE_BOUNDS[case]
    configure(home)
    seed_memory(home)
    if advance:
        clock.advance(advance)  # now_ms = E + 999; "now" is still E (clock.now floors)
    home.add_job(GLOBAL, "global", status="running", ownership_token="other", worker_id="w",
                 started_at=clock.now + lease - HOUR_S, lease_until=clock.now + lease,
                 input_watermark=1, last_success_watermark=0)
    before = global_job(home)
    agent_finishes(model)
    run_startup(home)
    if not claimed:
        assert consolidations(model) == 0, \
            "an agent ran although the other worker's lease ends one second after now"
        assert global_job(home) == before, \
            "the consolidation job row changed although its lease ends one second after now"
        assert not (home.memory_root / RAW).exists(), \
            "the inputs were written under the other worker's live lease, without a claim"
        return
    assert consolidations(model) == 1, "the job whose lease ends now (lease_until = now) was " \
        "not taken over: no consolidation agent started"
    row = _done(home, "the takeover of the job whose lease ends now")
    assert row["ownership_token"] != "other", \
        "the job taken over still carries the expired owner's ownership_token"


SKIPS: dict[str, dict[str, Any]] = {
    "cooldown": {"status": "done", "finished_at": -60},
    "backoff": {"status": "error", "finished_at": -60, "retry_at": 600,
                "last_error": "failed_agent"},
    "live-lease": {"status": "running", "ownership_token": "other", "worker_id": "w",
                   "started_at": -60, "lease_until": 600},
}
# the control: the same row once its cooldown, backoff or lease is over (offsets from now)
OVER: dict[str, tuple[str, dict[str, int]]] = {
    "cooldown": ("the six-hour cooldown", {"finished_at": -(6 * HOUR_S + 60)}),
    "backoff": ("the retry backoff", {"finished_at": -(HOUR_S + 60), "retry_at": -60}),
    "live-lease": ("the other worker's lease", {"started_at": -(2 * HOUR_S),
                                                "lease_until": -60}),
}


LEFTOVER_DIFF = "# Memory Workspace Diff\n\nLeft over by an earlier, interrupted run.\n"
OLD_SUMMARY = "thread_id: old\n\nA summary an earlier run wrote.\n"
AD_HOC = "extensions/ad_hoc/instructions.md"


@check("p2.run.skipped", title="a job in cooldown, backoff or under a live lease is left "
       "alone (no root file touched, no .git, no agent, its row unchanged) while Phase 1 "
       "still runs",
       rules=("P2-RUN-01", "P2-JOB-01", "P2-RUN-07", "START-03"), level="MUST", area="phase2")
@pytest.mark.parametrize("case", sorted(SKIPS))
def test_skipped(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 clock: HarnessClock, case: str) -> None:
    configure(home)
    seed_memory(home)
    # an eligible thread not yet extracted; its extraction fails, so Phase 1 runs (a stage-1
    # request) without storing an output that would re-arm the consolidation job (P1-JOB-04)
    fresh = home.add_thread(updated_ago_ms=2 * HOUR_S * 1000)
    model.on("stage1", http_error(500))
    # what an earlier run left in the root, which only a claimed run may touch (GIT-01, FS-05)
    root = home.memory_root
    (root / SUMMARIES).mkdir(parents=True)
    (root / DIFF_FILE).write_text(LEFTOVER_DIFF, encoding="utf-8")
    (root / SUMMARIES / "old.md").write_text(OLD_SUMMARY, encoding="utf-8")
    times = ("finished_at", "retry_at", "lease_until", "started_at")
    home.add_job(GLOBAL, "global", input_watermark=1, last_success_watermark=0,
                 **{k: clock.now + v if k in times else v for k, v in SKIPS[case].items()})
    before = global_job(home)
    agent_finishes(model)
    run_startup(home)
    what, over = OVER[case]
    assert consolidations(model) == 0, f"an agent ran during {what}"
    assert not (root / RAW).exists(), \
        f"the inputs were written during {what}, without a claim"
    assert global_job(home) == before, f"the consolidation job row changed during {what}"
    assert requests_for(model, fresh.id), f"Phase 1 did not run in the startup skipped for " \
        f"{what}: no stage-1 request names the eligible thread"
    assert (root / AD_HOC).is_file(), f"the startup skipped for {what} did not seed {AD_HOC}"
    assert not (root / ".git").exists(), \
        f"the startup skipped for {what} created .git in the memory root without a claim"
    assert (root / DIFF_FILE).is_file() and \
        (root / DIFF_FILE).read_text(encoding="utf-8") == LEFTOVER_DIFF, \
        f"the startup skipped for {what} removed or changed the leftover {DIFF_FILE}, which " \
        "only a claimed run's prepare step removes"
    assert (root / SUMMARIES / "old.md").is_file() and \
        (root / SUMMARIES / "old.md").read_text(encoding="utf-8") == OLD_SUMMARY, \
        f"the startup skipped for {what} removed or changed {SUMMARIES}/old.md, which only a " \
        "claimed run's sync removes"
    # control: once it is over, the next startup does consolidate
    sets = ", ".join(f"{column} = ?" for column in over)
    home.execute(home.memories_db, f"UPDATE jobs SET {sets} WHERE kind = ?",
                 (*(clock.now + offset for offset in over.values()), GLOBAL))
    run_startup(home)
    if consolidations(model) == 0:
        fail(f"control: once {what} was over, the next startup still started no consolidation "
             "agent, so the skip cannot be told from a pipeline that never consolidates")


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
                  marks_before: dict[str, Any], what: str) -> None:
    row = job(home, what)
    assert row["status"] == "error", f"{what} did not leave the consolidation job in error"
    assert row["last_error"] == reason, f"the failed run's last_error is not {reason}"
    assert row["retry_remaining"] == 2, "the failed run did not spend exactly one retry"
    assert row["lease_until"] is None, "the failed consolidation job still holds its lease"
    assert_now(row["finished_at"], clock, "finished_at of the failed run")
    assert row["retry_at"] is not None, "the failed consolidation job has no retry_at"
    assert row["retry_at"] - row["finished_at"] == HOUR_S, \
        "the failed job's retry_at is not one hour after its finished_at"
    assert marks(home) == marks_before, "the failed run changed the selection marks"


@check("p2.run.sync-failure", layout="v1", title="inputs that cannot be written fail the run as "
       "failed_sync_workspace_inputs, before any agent", rules="P2-RUN-01", level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", sorted(BREAKERS))
def test_sync_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      clock: HarnessClock, case: str) -> None:
    _sync_failure(home, model, run_startup, clock, BREAKERS[case])


@check("p2.v2.sync-failure", layout="v2", title="layout v2: a rollout_summaries that is a file "
       "fails the run as failed_sync_workspace_inputs, before any agent",
       rules=("P2-RUN-01", "P2-V2-01"),
       level="MUST", area="phase2", codex_since="0.155.0")
def test_v2_sync_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         clock: HarnessClock) -> None:
    _sync_failure(home, model, run_startup, clock, summaries_is_a_file)


def _sync_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                  clock: HarnessClock, breaker: Callable[[CodexHome], None]) -> None:
    configure(home)
    seed_memory(home, selected_for_phase2=0)
    breaker(home)
    before = marks(home)
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "an agent ran after the sync failed"
    assert_failed(home, clock, "failed_sync_workspace_inputs", before,
                  "the run whose inputs could not be written")


AGENT_FAILURES: dict[str, Reply] = {
    "http-500": http_error(500),
    "http-429": http_error(429, '{"error": {"message": "slow down"}}'),
    "response-failed": failed("the model broke"),
    "cut-stream": cut_stream(message(DONE)),
}


def _one_selected_memory(home: CodexHome) -> dict[str, tuple[int, int | None]]:
    """Configure, seed one memory marked as selected by an earlier run; the marks."""
    configure(home)
    thread = seed_memory(home)
    [row] = home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs")
    home.update_stage1_output(thread, selected_for_phase2=1,
                              selected_for_phase2_source_updated_at=row["source_updated_at"])
    return marks(home)


@check("p2.run.agent-failure", title="an agent whose model call fails is a failure "
       "(failed_agent), not a success", rules=("P2-RUN-05", "P2-RUN-01"), level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", sorted(AGENT_FAILURES))
def test_agent_failure(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       clock: HarnessClock, case: str) -> None:
    before = _one_selected_memory(home)
    agent_finishes(model, AGENT_FAILURES[case])
    run_startup(home)
    assert consolidations(model) >= 1, "the consolidation agent never started"
    assert_failed(home, clock, "failed_agent", before,
                  "the run whose agent's model call failed")
    assert RAW not in committed_files(_workspace(home, "after the failed consolidation")), \
        "raw_memories.md was committed after the failed consolidation"


@check("p2.run.retry-after-failure", title="a failed run is retried by a startup after the "
       "one-hour backoff and then succeeds", rules=("P2-RUN-01", "P2-JOB-01"), level="MUST",
       area="phase2")
def test_retry_after_failure(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup, http_error(500))
    assert job(home, "the consolidation whose agent got HTTP 500")["status"] == "error", \
        "the consolidation whose agent got HTTP 500 did not leave the job in error"
    model.reset()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "the failed consolidation was retried inside its " \
        "one-hour backoff"
    home.execute(home.memories_db, "UPDATE jobs SET retry_at = retry_at - 3601, finished_at = "
                 "finished_at - 3601 WHERE kind = ?", (GLOBAL,))
    run_startup(home)
    assert consolidations(model) == 1, \
        "the failed consolidation was not retried once by a startup after its backoff"
    _done(home, "the retry after the backoff")
    assert status(_workspace(home, "after the successful retry")) == "", \
        "the memory root has uncommitted changes after the successful retry"


AGENT_LOOP_BUDGET = 4


@check("p2.run.agent-turn-bound", title="an agent that never stops calling tools is stopped "
       "and the run fails", rules=("AGENT-04", "P2-RUN-05"), level="SHOULD", area="phase2")
def test_agent_turn_bound(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    bad = "*** Begin Patch\n*** Delete File: no-such-file.md\n*** End Patch\n"
    model.on("consolidation", *([custom_tool_call("apply_patch", bad, "call_loop")] * 100),
             message(DONE))
    # up to a hundred model turns in one startup: Codex took 33 to more than 60 s for them on
    # two loaded cores, so this startup gets four times the usual budget
    run_startup(home, timeout_s=AGENT_LOOP_BUDGET * fixtures.startup_timeout_s)
    assert consolidations(model) >= 1, "the consolidation agent never started"
    assert len(model.of_kind("consolidation")) < 100, "the consolidation agent's tool loop " \
        "was not bounded: it was still calling tools after 100 model turns"
    assert job(home, "the consolidation")["last_error"] == "failed_agent", \
        "the stopped agent's run did not fail as failed_agent"


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
    row = _done(home, "the consolidation")
    assert row["finished_at"] != clock.now - 30_000, \
        "the consolidation did not run: the job still has the finished_at it was given before " \
        "the startup"
    newest = max([r["source_updated_at"] for r in home.query(
        home.memories_db, "SELECT source_updated_at FROM stage1_outputs")], default=0)
    if clock.injected:
        assert newest == (clock.now + max(sources) if sources else 0), \
            "the stage1_outputs source times are not the ones seeded before the startup"
    # with the wall clock a source time may land a second off; the table's offset holds
    # whenever the seeded times are exact
    want = clock.now + expected if clock.injected else max(
        clock.now + claimed, newest, clock.now + previous if previous else 0)
    assert row["last_success_watermark"] == want, "last_success_watermark is not the " \
        "largest of the claimed input watermark, the newest selected source time and its " \
        "previous value"


@check("p2.run.without-data", title="a home without any stage-1 data still gets a first "
       "consolidation (layout v1: with the placeholder inputs)", rules="P2-RUN-06", level="MUST",
       area="phase2")
def test_without_data(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 1, \
        "a home without stage-1 data got no first consolidation (no agent started)"
    row = _done(home, "the first consolidation without stage-1 data")
    assert row["last_success_watermark"] == 0, \
        "the consolidation without stage-1 data recorded a last_success_watermark other than 0"
    committed = committed_files(_workspace(home, "after the first consolidation"))
    if home.layout == "v1":
        assert RAW in committed, \
            "the placeholder raw_memories.md is not committed after the first consolidation"


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
    assert consolidations(model) == 0, "the cooldown was ignored: an agent ran"
    row = job(home, "the startup")
    assert row["input_watermark"] is not None, "the consolidation job has no input_watermark"
    assert row["input_watermark"] >= fresh.updated_at_ms // 1000, \
        "the new stage-1 output did not re-arm the consolidation job: its input_watermark is " \
        "below the thread's updated_at"
    assert not (home.memory_root / RAW).exists(), "the inputs were written during the cooldown"


@check("p2.run.selected-survive-pruning", title="rows of the last successful selection are "
       "not pruned even when they fall out of the unused window", rules=("P2-RUN-02",
                                                                         "RET-01"),
       level="MUST", area="phase2")
def test_selected_survive_pruning(home: CodexHome, model: MockModel,
                                  run_startup: StartupRunner) -> None:
    thread = one_memory_run(home, model, run_startup)
    _done(home, "the first consolidation")
    assert _mark(home, thread, "after the first consolidation")[0] == 1, \
        "the first consolidation did not mark its selected row"
    configure(home, {"max_unused_days": 0})
    expire_cooldown(home)
    run_startup(home)
    assert thread in marks(home), "a row of the last successful selection was pruned"
    _done(home, "the second consolidation")
    assert marks(home)[thread] == (0, None), "the out-of-window row is still marked selected"
    folder = home.memory_root / SUMMARIES
    if not folder.is_dir():
        fail(f"{SUMMARIES}/ is missing after the second consolidation")
    assert [p.name for p in folder.iterdir() if p.name.endswith(".md")] == [], \
        "the out-of-window row's summary is still in rollout_summaries/"


class _JobSeen:
    """The consolidation job row when the agent's second request arrived (after its first
    tool call), or None before that."""

    def __init__(self, home: CodexHome) -> None:
        self.home = home
        self.row: dict[str, Any] | None = None

    def __call__(self) -> None:
        if self.row is None:
            self.row = global_job(self.home)


@check("p2.run.lease-while-running", title="while the consolidation agent works, the job is "
       "running under a lease that ends one hour from now", rules=("P2-JOB-01", "P2-JOB-05"),
       level="MUST", area="phase2")
def test_lease_while_running(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                             clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    seen = _JobSeen(home)
    agent_patches(model, add_file("notes.md", "A note."), then=seen)
    run_startup(home)
    if seen.row is None:
        fail("the consolidation agent's second request (after its tool call) never arrived")
    assert seen.row["status"] == "running", \
        "the consolidation job was not running while its agent worked"
    assert seen.row["lease_until"] is not None, \
        "the running consolidation job had no lease_until while its agent worked"
    assert_now(seen.row["lease_until"] - HOUR_S, clock,
               "the running job's lease_until less one hour (a claim or heartbeat sets it to "
               "now + 3600)")


VALID_SUMMARY = "v1\n## Summary\n- kept\n"
# case -> (files the agent writes, whether the run succeeds)
ARTIFACT_CASES: dict[str, tuple[dict[str, str], bool]] = {
    "nothing-written": ({}, False),
    "memory-only": ({"MEMORY.md": "# Memory\n"}, False),
    "summary-only": ({"memory_summary.md": VALID_SUMMARY}, False),
    "summary-not-v1": ({"MEMORY.md": "# Memory\n", "memory_summary.md": "v2\n## Summary\n"},
                       False),
    "summary-v1-in-second-line": ({"MEMORY.md": "# Memory\n",
                                   "memory_summary.md": "# Summary\nv1\n"}, False),
    "both-valid": ({"MEMORY.md": "# Memory\n", "memory_summary.md": VALID_SUMMARY}, True),
    "summary-just-v1": ({"MEMORY.md": "# Memory\n", "memory_summary.md": "v1\n"}, True),
    "summary-v1-trailing-space": ({"MEMORY.md": "# Memory\n",
                                   "memory_summary.md": "v1 \n## Summary\n"}, False),
    "summary-upper-v1": ({"MEMORY.md": "# Memory\n", "memory_summary.md": "V1\n## Summary\n"},
                         False),
    "summary-v10": ({"MEMORY.md": "# Memory\n", "memory_summary.md": "v10\n## Summary\n"},
                    False),
    "memory-empty": ({"MEMORY.md": "", "memory_summary.md": VALID_SUMMARY}, True),
    "summary-leading-blank-line": ({"MEMORY.md": "# Memory\n",
                                    "memory_summary.md": "\nv1\n## Summary\n"}, False),
}


def _add_files(files: dict[str, str]) -> str:
    body = "".join(f"*** Add File: {path}\n" + "".join(f"+{line}\n" for line in
                                                         text.splitlines())
                   for path, text in files.items())
    return f"*** Begin Patch\n{body}*** End Patch\n"


@check("p2.run.invalid-artifacts", title="an agent that does not leave MEMORY.md and a "
       "memory_summary.md starting with v1 fails the run (failed_invalid_artifacts), nothing "
       "committed", rules=("P2-RUN-08", "P2-RUN-01"), level="MUST", area="phase2",
       codex_since="0.155.0", layout="v1")
@pytest.mark.parametrize("case", list(ARTIFACT_CASES))
def test_invalid_artifacts(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                           clock: HarnessClock, case: str) -> None:
    files, valid = ARTIFACT_CASES[case]
    _artifacts_run(home, model, run_startup, clock, files, valid, "")


def _artifacts_run(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock, files: dict[str, str], valid: bool, label: str) -> None:
    """One consolidation whose agent writes exactly `files`: done and committed when they are
    `valid`, else failed_invalid_artifacts with nothing committed."""
    model.agent_artifacts = None  # the agent writes only what the case says
    before = _one_selected_memory(home)
    if files:
        agent_patches(model, _add_files(files))
    else:
        agent_finishes(model)
    run_startup(home)
    assert consolidations(model) >= 1, "the consolidation agent never started"
    committed = set(committed_files(_workspace(home, "after the consolidation")))
    if valid:
        _done(home, f"the consolidation whose agent wrote {', '.join(files)}{label}")
        assert set(files) <= committed, \
            "the agent's valid artifacts were not committed with the baseline"
    else:
        assert_failed(home, clock, "failed_invalid_artifacts", before,
                      f"the run whose agent wrote {', '.join(files) or 'nothing'}{label}")
        assert RAW not in committed and not set(files) & committed, \
            "the run with invalid artifacts committed its files"


V2_HEADINGS = ("## User Profile", "## User preferences", "## General Tips",
               "## What's in Memory")


def _v2_summary(headings: tuple[str, ...] = V2_HEADINGS, *, first: str = "v1",
                size: int | None = None, pad: str = "x") -> str:
    """A memory_summary.md: `first`, one line per heading with a bullet under it, and, with
    `size`, a last line of `pad` characters that brings the file to exactly `size` UTF-8 bytes
    (newline included)."""
    text = f"{first}\n" + "".join(f"{h}\n- mock\n" for h in headings)
    if size is not None:
        room = size - len(text.encode()) - 1
        count, rest = divmod(room, len(pad.encode()))
        text += pad * count + "y" * rest + "\n"
        assert len(text.encode()) == size
    return text


# case -> (memory_summary.md or None for none, whether MEMORY.md is written too, valid)
V2_ARTIFACT_CASES: dict[str, tuple[str | None, bool, bool]] = {
    "valid": (_v2_summary(), False, True),
    "valid-with-memory-md": (_v2_summary(), True, True),
    "headings-reversed": (_v2_summary(V2_HEADINGS[::-1]), False, True),
    "heading-trailing-spaces": (_v2_summary(("## User Profile  ", *V2_HEADINGS[1:])), False,
                                True),
    "heading-leading-spaces": (_v2_summary(("  ## User Profile", *V2_HEADINGS[1:])), False,
                               True),
    "ascii-9999-bytes": (_v2_summary(size=9_999), False, True),
    "ascii-10000-bytes": (_v2_summary(size=10_000), False, False),
    "multibyte-9999-bytes": (_v2_summary(size=9_999, pad="é🐈"), False, True),
    "multibyte-10000-bytes": (_v2_summary(size=10_000, pad="é🐈"), False, False),
    "heading-missing": (_v2_summary(V2_HEADINGS[:2] + V2_HEADINGS[3:]), False, False),
    "heading-level-3": (_v2_summary(("### User Profile", *V2_HEADINGS[1:])), False, False),
    "heading-lower-case": (_v2_summary(("## user profile", *V2_HEADINGS[1:])), False, False),
    "heading-with-suffix": (_v2_summary(("## User Profile (me)", *V2_HEADINGS[1:])), False,
                            False),
    "first-line-trailing-space": (_v2_summary(first="v1 "), False, False),
    "first-line-v1x": (_v2_summary(first="v1x"), False, False),
    "no-summary": (None, True, False),
}


@check("p2.v2.artifacts", title="layout v2: the agent must leave a memory_summary.md starting "
       "with v1, with the four section headings, under 10,000 bytes; MEMORY.md is not needed",
       rules=("P2-V2-02", "P2-RUN-01"), level="MUST", area="phase2", codex_since="0.155.0",
       layout="v2")
@pytest.mark.parametrize("case", list(V2_ARTIFACT_CASES))
def test_v2_artifacts(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      clock: HarnessClock, case: str) -> None:
    summary, memory_md, valid = V2_ARTIFACT_CASES[case]
    files = {"MEMORY.md": "# Memory\n"} if memory_md else {}
    if summary is not None:
        files["memory_summary.md"] = summary
    _artifacts_run(home, model, run_startup, clock, files, valid, f" ({case})")
    written = home.memory_root / "memory_summary.md"
    if summary is not None:
        assert written.is_file() and written.read_bytes() == summary.encode(), \
            "the agent's patch did not leave memory_summary.md as the case wrote it"


def _unchanged_root(layout: str, valid: bool) -> dict[str, str]:
    """A memory root that the first sync leaves unchanged on a home without stage-1 data:
    the placeholder raw_memories.md in layout v1, and artifacts that are valid or not."""
    if layout == "v1":
        files = {RAW: EMPTY_RAW, "memory_summary.md": "v1\n"}  # no MEMORY.md: not valid
        return {**files, "MEMORY.md": "# Memory\n"} if valid else files
    return {"memory_summary.md": _v2_summary() if valid else "v1\n"}  # v2: headings missing


@check("p2.run.unchanged-invalid-artifacts", title="an unchanged workspace whose artifacts "
       "are not valid still starts the agent (its diff file lists no change); with valid "
       "artifacts it is a no-change success", rules=("P2-RUN-09", "P2-RUN-02"), level="MUST",
       area="phase2", codex_since="0.155.0")
@pytest.mark.parametrize("valid", [False, True], ids=["invalid-artifacts", "valid-artifacts"])
def test_unchanged_invalid_artifacts(home: CodexHome, model: MockModel,
                                     run_startup: StartupRunner, clock: HarnessClock,
                                     valid: bool) -> None:
    configure(home)
    home.ensure_state_db()
    root = home.memory_root
    (root / SUMMARIES).mkdir(parents=True)
    for name, text in _unchanged_root(home.layout, valid).items():
        (root / name).write_text(text, encoding="utf-8")
    seen: list[str | None] = []

    def probe() -> None:
        path = root / DIFF_FILE
        seen.append(path.read_text(encoding="utf-8") if path.is_file() else None)

    model.agent_artifacts = None  # the agent writes nothing
    agent_finishes(model, message(DONE).probed(probe))
    run_startup(home)
    if valid:
        assert consolidations(model) == 0, "an agent ran although the workspace was " \
            "unchanged and the artifacts in the memory root are valid"
        _done(home, "the no-change run with valid artifacts")
        return
    assert consolidations(model) == 1, "no agent ran (exactly once) although the artifacts " \
        "in the memory root are not valid; only the workspace was unchanged"
    if seen[0] is None:
        fail(f"when the agent started there was no {DIFF_FILE}")
    assert diff_status(seen[0]) == ["- none"], \
        f"the status list of {DIFF_FILE} of the unchanged workspace is not the single line " \
        "'- none'"
    assert_failed(home, clock, "failed_invalid_artifacts", {},
                  "the unchanged run whose agent left the invalid artifacts as they were")


# case -> (max_thread_count before or None for a fresh DB, memories seeded, the agent leaves
# valid artifacts, max_thread_count after)
PROGRESS_CASES: dict[str, tuple[int | None, int, bool, int]] = {
    "first-success": (None, 2, True, 2),
    "higher-before": (5, 2, True, 5),
    "lower-before": (1, 3, True, 3),
    "failed-run": (1, 3, False, 1),
}


@check("p2.progress.max-threads", title="consolidation_progress keeps the most memories one "
       "successful consolidation used; a failed run leaves it", rules=("P2-PROG-01",),
       level="MUST", area="phase2", codex_since="0.155.0")
@pytest.mark.parametrize("case", list(PROGRESS_CASES))
def test_progress(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                  case: str) -> None:
    before, seeded, valid, after = PROGRESS_CASES[case]
    configure(home)
    home.ensure_state_db()
    if before is not None:
        home.set_consolidation_progress(before)
    for index in range(seeded):
        seed_memory(home, age_s=(2 + index) * 3600)
    if not valid:
        model.agent_artifacts = None  # the agent leaves nothing: the run fails
    agent_finishes(model)
    run_startup(home)
    row = job(home, "after the consolidation")
    assert row["status"] == ("done" if valid else "error"), \
        f"the consolidation did not end {'done' if valid else 'in error'} as the case set up"
    rows = home.query(home.memories_db, "SELECT singleton, max_thread_count FROM "
                      "consolidation_progress")
    assert rows == [{"singleton": 1, "max_thread_count": after}], \
        f"consolidation_progress after a {'successful' if valid else 'failed'} run over " \
        f"{seeded} memories (before: {before}) is not one row with max_thread_count {after}"

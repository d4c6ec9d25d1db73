"""START / EXT: when a startup runs at all, and what it prepares before Phase 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks import consolidation
from memconform.checks.stage1 import VALID_OUTPUT, configure, extracted_once, job, output
from memconform.codex import releases
from memconform.fixtures import StartupRunner
from memconform.home import LAYOUT_PATHS, CodexHome, Thread
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.verdicts import fail, produced

PIPELINE_KINDS = ("stage1", "consolidation")
USER_NOTES = "# My own instructions\n\nKeep this file exactly as I wrote it.\n"
ELIGIBLE_AGO_MS = 8 * 3_600_000  # past the default 6-hour idle threshold, within 10 days
DAY_S = 86_400
STALE_ID = "stale-unselected-output"
# a plan-usage answer in the backend's shape, well within any threshold
USAGE_WITHIN = {"plan_type": "plus", "rate_limit": {
    "allowed": True, "limit_reached": False,
    "primary_window": {"used_percent": 10, "limit_window_seconds": 18000,
                       "reset_after_seconds": 3600, "reset_at": 1_780_318_800},
    "secondary_window": {"used_percent": 10, "limit_window_seconds": 604800,
                         "reset_after_seconds": 86400, "reset_at": 1_780_401_600}}}


def _assert_nothing_ran(home: CodexHome, model: MockModel, guard: str) -> None:
    kinds = [r.kind for r in model.requests if r.kind in PIPELINE_KINDS]
    assert kinds == [], f"{guard}, yet the pipeline sent model requests (their kinds)"
    assert model.of_kind("usage") == [], f"{guard}, yet the plan usage was asked for"
    assert not home.memory_root.exists(), f"{guard}, yet the memory root was created"
    rows = [(r["kind"], r["status"]) for r in home.query(
        home.memories_db, "SELECT kind, status FROM jobs ORDER BY kind, job_key")]
    assert rows == [], f"{guard}, yet job rows were written (kind, status)"


def _eligible_home(home: CodexHome) -> Thread:
    """One thread that a running pipeline would extract, under the default settings too."""
    return home.add_thread(updated_ago_ms=ELIGIBLE_AGO_MS)


def _assert_control_runs(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         thread: Thread, control: str, **session: Any) -> None:
    """Control: a startup on the same home without the guard (feature on, idle 1 h, the
    consolidation job in cooldown) extracts the eligible thread, so the guarded startup's
    "nothing" was the guard's doing."""
    configure(home)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home, **session)
    extracted_once(model, thread.id, f"the eligible thread (control: {control})")


@check("startup.guard.feature-off", title="with the memories feature off nothing runs",
       rules="START-01", level="MUST", area="startup")
@pytest.mark.parametrize("feature", ["absent", "false"])
def test_feature_off(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      feature: str) -> None:
    thread = _eligible_home(home)
    home.write_config(feature=None if feature == "absent" else False)
    run_startup(home)
    _assert_nothing_ran(home, model, "with [features] memories absent" if feature == "absent"
                        else "with [features] memories = false")
    _assert_control_runs(home, model, run_startup, thread,
                         "a second startup on the same home with the feature on")


@check("startup.guard.ephemeral", title="an ephemeral session runs no pipeline",
       rules="START-01", level="MUST", area="startup")
def test_ephemeral(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread = _eligible_home(home)
    run_startup(home, ephemeral=True)
    _assert_nothing_ran(home, model, "in an ephemeral session")
    _assert_control_runs(home, model, run_startup, thread,
                         "a second, non-ephemeral startup on the same home")


@check("startup.guard.subagent", title="a sub-agent session runs no pipeline",
       rules="START-01", level="SHOULD", area="startup", needs=("session.subagent",))
def test_subagent(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread = _eligible_home(home)
    run_startup(home, subagent=True)
    _assert_nothing_ran(home, model, "in a sub-agent session")
    _assert_control_runs(home, model, run_startup, thread,
                         "a second startup on the same home from a root session")


def _stale_output(home: CodexHome) -> list[dict[str, Any]]:
    """A memories database from an earlier run holding one unselected output unused for 60
    days, which any startup that reaches pruning deletes (RET-01, 30 days by default); the
    table's rows as seeded."""
    home.add_stage1_output(STALE_ID, raw_memory="- a memory nobody used for sixty days",
                           rollout_summary="Stale.",
                           source_updated_at=home.now_ms // 1000 - 60 * DAY_S)
    return _outputs(home)


def _assert_stale_kept(home: CodexHome, before: list[dict[str, Any]], guard: str) -> None:
    if _outputs(home) != before:
        fail(f"{guard}, yet the stage1_outputs rows changed: the 60-day-old unselected output "
             "must survive a startup that does not run",
             expected=[STALE_ID], actual=[r["thread_id"] for r in _outputs(home)])


def _outputs(home: CodexHome) -> list[dict[str, Any]]:
    return home.query(home.memories_db, "SELECT * FROM stage1_outputs ORDER BY thread_id")


EARLY_EXITS: dict[str, tuple[bool | None, bool, str]] = {
    # name: ([features] memories, ephemeral session, the guard in words)
    "ephemeral": (True, True, "in an ephemeral session"),
    "feature-absent": (None, False, "with [features] memories absent"),
    "feature-false": (False, False, "with [features] memories = false"),
}


@check("startup.guard.prunes-nothing", title="a startup that does not run prunes nothing",
       rules=("START-01", "START-03", "RET-01"), level="MUST", area="startup")
@pytest.mark.parametrize("case", sorted(EARLY_EXITS))
def test_prunes_nothing(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                        case: str) -> None:
    feature, ephemeral, guard = EARLY_EXITS[case]
    thread = _eligible_home(home)
    before = _stale_output(home)
    home.write_config(feature=feature)
    run_startup(home, ephemeral=ephemeral)
    _assert_nothing_ran(home, model, guard)
    _assert_stale_kept(home, before, guard)
    _assert_control_runs(home, model, run_startup, thread, "a second startup on the same home "
                         "without the guard")
    assert output(home, STALE_ID) is None, ("control: a startup without the guard did not "
                                            "prune the 60-day-old unselected output either")


@check("startup.guard.no-usage-request", title="a startup that does not run does not ask "
       "for plan usage", rules=("START-01", "GUARD-01"), level="SHOULD", area="startup",
       needs=("auth.chatgpt",))
@pytest.mark.parametrize("case", sorted(EARLY_EXITS))
def test_no_usage_request(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                          case: str) -> None:
    feature, ephemeral, guard = EARLY_EXITS[case]
    thread = _eligible_home(home)
    home.write_chatgpt_login()
    model.set_usage(USAGE_WITHIN)
    home.write_config(feature=feature, top={"chatgpt_base_url": model.backend_url})
    run_startup(home, ephemeral=ephemeral)
    _assert_nothing_ran(home, model, f"{guard} with a ChatGPT login")
    configure(home, top={"chatgpt_base_url": model.backend_url})
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    fetched = len(model.of_kind("usage"))
    assert fetched == 1, ("control: a startup without the guard did not ask for plan usage "
                          "either" if fetched == 0 else "control: a startup without the guard "
                          "asked for plan usage more than once")
    extracted_once(model, thread.id, "the eligible thread (control: a startup without the "
                   "guard)")


@check("startup.guard.subagent-leaves-state", title="a sub-agent session prunes nothing and "
       "does not ask for plan usage", rules=("START-01", "GUARD-01"), level="SHOULD",
       area="startup", needs=("session.subagent", "auth.chatgpt"))
def test_subagent_leaves_state(home: CodexHome, model: MockModel,
                               run_startup: StartupRunner) -> None:
    thread = _eligible_home(home)
    before = _stale_output(home)
    home.write_chatgpt_login()
    model.set_usage(USAGE_WITHIN)
    home.write_config(top={"chatgpt_base_url": model.backend_url})
    run_startup(home, subagent=True)
    _assert_nothing_ran(home, model, "in a sub-agent session with a ChatGPT login")
    _assert_stale_kept(home, before, "in a sub-agent session")
    configure(home, top={"chatgpt_base_url": model.backend_url})
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert len(model.of_kind("usage")) == 1, \
        "control: a startup from a root session did not ask for plan usage once"
    extracted_once(model, thread.id, "the eligible thread (control: a startup from a root "
                   "session)")
    assert output(home, STALE_ID) is None, ("control: a startup from a root session did not "
                                            "prune the 60-day-old unselected output either")


@check("startup.guard.no-state-db", title="a home without a state database runs no pipeline "
       "and leaves an existing memories database alone", rules="START-02", level="SHOULD",
       area="startup", needs=("startup.without-state-db",))
def test_no_state_db(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    before = _stale_output(home)
    if home.state_db.exists():
        raise RuntimeError("seeding the memories database created a state database")
    run_startup(home)
    _assert_nothing_ran(home, model, "without a state database")
    assert not home.state_db.exists(), "the pipeline created a state database"
    _assert_stale_kept(home, before, "without a state database")
    _assert_control_runs(home, model, run_startup, _eligible_home(home),
                         "a second startup after the state database was added")
    assert output(home, STALE_ID) is None, ("control: a startup with a state database did not "
                                            "prune the 60-day-old unselected output either")


@check("startup.guard.no-state-db-no-usage-request", title="a home without a state database "
       "does not ask for plan usage", rules=("START-02", "GUARD-01"), level="SHOULD",
       area="startup", needs=("startup.without-state-db", "auth.chatgpt"))
def test_no_state_db_no_usage_request(home: CodexHome, model: MockModel,
                                      run_startup: StartupRunner) -> None:
    home.write_chatgpt_login()
    model.set_usage(USAGE_WITHIN)
    home.write_config(top={"chatgpt_base_url": model.backend_url})
    run_startup(home)
    _assert_nothing_ran(home, model, "without a state database, with a ChatGPT login")
    thread = _eligible_home(home)
    configure(home, top={"chatgpt_base_url": model.backend_url})
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert len(model.of_kind("usage")) == 1, \
        "control: a startup after the state database was added did not ask for plan usage once"
    extracted_once(model, thread.id, "the eligible thread (control: a startup after the state "
                   "database was added)")


@check("startup.root.created", title="a startup creates the memory root", rules="START-03",
       level="MUST", area="startup", smoke=True)
def test_root_created(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    if home.memory_root.exists():
        raise RuntimeError("the harness built a home that already has a memory root")
    run_startup(home)
    assert home.memory_root.is_dir(), "the startup did not create the memory root (memories/)"


@check("startup.root.generate-off", title="generate_memories = false does not stop the "
       "startup itself", rules="START-01", level="MUST", area="startup")
def test_root_generate_off(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    home.write_config(memories={"generate_memories": False})
    run_startup(home)
    assert home.memory_root.is_dir(), \
        "with generate_memories = false the startup did not create the memory root"


@check("startup.generate-off.pipeline-runs", title="generate_memories = false still runs "
       "Phase 1 on existing enabled threads and Phase 2", rules=("START-01", "START-03"),
       level="MUST", area="startup")
def test_generate_off_runs(home: CodexHome, model: MockModel,
                           run_startup: StartupRunner) -> None:
    # the consolidation job is free to claim (no row), idle threshold 1 h
    consolidation.configure(home, {"generate_memories": False})
    thread = _eligible_home(home)
    model.on("stage1", json_output(VALID_OUTPUT))
    consolidation.agent_finishes(model)
    run_startup(home)
    extracted_once(model, thread.id, "with generate_memories = false, the existing enabled "
                   "thread")
    row = job(home, thread.id)
    assert row is not None and row["status"] == "done", \
        "with generate_memories = false the thread's stage-1 job did not end done"
    assert output(home, thread.id) is not None, \
        "with generate_memories = false the extraction's answer was not stored"
    glob = consolidation.global_job(home)
    if glob is None or consolidation.consolidations(model) == 0:
        fail("with generate_memories = false Phase 2 did not run: no consolidation agent was "
             "started or no memory_consolidate_global row was written",
             expected="a consolidation run",
             actual=f"{consolidation.consolidations(model)} agent conversations, "
                    f"row {'present' if glob else 'absent'}")
    assert glob["status"] == "done", \
        "with generate_memories = false the consolidation job did not end done"


@check("startup.ext.seeded", title="the ad-hoc extension instructions are seeded",
       rules="EXT-01", level="MUST", area="startup")
def test_ext_seeded(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    run_startup(home)
    instructions = home.memory_root / "extensions" / "ad_hoc" / "instructions.md"
    text = produced(instructions, "memories/extensions/ad_hoc/instructions.md")
    assert text.strip(), "the seeded extensions/ad_hoc/instructions.md is empty"


@check("startup.ext.not-overwritten", title="existing extension instructions are never "
       "overwritten", rules="EXT-01", level="MUST", area="startup")
def test_ext_not_overwritten(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    instructions = home.memory_root / "extensions" / "ad_hoc" / "instructions.md"
    instructions.parent.mkdir(parents=True)
    instructions.write_text(USER_NOTES, encoding="utf-8")
    run_startup(home)
    assert instructions.is_file(), "the startup removed the user's extension instructions"
    assert produced(instructions, "extensions/ad_hoc/instructions.md") == USER_NOTES, \
        "the startup changed the user's existing extension instructions"
    # Control: once the file is gone, the next startup on the same home seeds it again.
    instructions.unlink()
    run_startup(home)
    text = produced(instructions, "memories/extensions/ad_hoc/instructions.md (control: a "
                    "second startup after the user's file was removed)")
    assert text.strip(), "the re-seeded extensions/ad_hoc/instructions.md is empty (control)"


@check("startup.root.symlinked", title="a memory root that is a symlink to a directory is "
       "used through the link", rules="START-03", level="MUST", area="startup")
def test_root_symlinked(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    target = home.path / "memories-elsewhere"
    target.mkdir()
    home.memory_root.symlink_to(target.name, target_is_directory=True)
    thread = consolidation.one_memory_run(home, model, run_startup)
    assert home.memory_root.is_symlink(), \
        "the startup replaced the memory root's symlink (memories -> memories-elsewhere)"
    glob = consolidation.global_job(home)
    assert glob is not None and glob["status"] == "done", \
        f"with the memory root a symlink to a directory, the consolidation did not end done " \
        f"({glob})"
    summaries = sorted((target / "rollout_summaries").glob("*.md"))
    assert any(thread in path.read_text(encoding="utf-8") for path in summaries), \
        "rollout_summaries/ in the symlink's target holds no summary of the memory"
    if home.layout == "v1":  # layout v2 has no raw_memories.md
        raw = produced(target / "raw_memories.md", "raw_memories.md in the symlink's target")
        assert thread in raw, "raw_memories.md in the symlink's target does not hold the memory"


def _dangling_link(root: Path) -> None:
    root.symlink_to("memories-missing", target_is_directory=True)


def _plain_file(root: Path) -> None:
    root.write_text("not a directory\n", encoding="utf-8")


UNUSABLE_ROOTS: dict[str, tuple[Callable[[Path], None], str]] = {
    # name: (make memories/ unusable, what it is)
    "dangling-symlink": (_dangling_link, "a symlink to a missing directory"),
    "regular-file": (_plain_file, "a regular file"),
}


@check("startup.root.unusable", title="a memory root that cannot be a directory stops the "
       "pipeline before anything else, and is left as it is", rules=("START-03", "RET-01"),
       level="MUST", area="startup")
@pytest.mark.parametrize("case", sorted(UNUSABLE_ROOTS))
def test_root_unusable(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       case: str) -> None:
    make, what = UNUSABLE_ROOTS[case]
    thread = _eligible_home(home)
    before = _stale_output(home)
    configure(home)
    make(home.memory_root)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    guard = f"with memories/ {what}"
    kinds = [r.kind for r in model.requests if r.kind in PIPELINE_KINDS]
    assert kinds == [], f"{guard}, yet the pipeline sent model requests (their kinds)"
    assert job(home, thread.id) is None, f"{guard}, yet a stage-1 job row was written"
    _assert_stale_kept(home, before, guard)
    if case == "dangling-symlink":
        assert home.memory_root.is_symlink() and not home.memory_root.exists(), \
            f"{guard}, the startup changed the link or created its target"
    else:
        assert home.memory_root.read_text(encoding="utf-8") == "not a directory\n", \
            f"{guard}, the startup changed the file"
    # control: with the root made a directory again, the same home runs
    home.memory_root.unlink()
    run_startup(home)
    extracted_once(model, thread.id, f"the eligible thread (control: memories/ no longer "
                   f"{what})")


# case -> (the [memories] keys, the layouts a startup runs; None: the followed release's
# `dual_write_runs` for the selected layout, which differ between releases)
LAYOUT_RUNS: dict[str, tuple[dict[str, Any], tuple[str, ...] | None]] = {
    "version-v1": ({"version": "v1"}, ("v1",)),
    "version-v2": ({"version": "v2"}, ("v2",)),
    "dual-write-from-v1": ({"version": "v1", "dual_write": True}, None),
    "dual-write-from-v2": ({"version": "v2", "dual_write": True}, None),
}


def _layout_rows(home: CodexHome, layout: str, table: str) -> list[dict[str, Any]]:
    db = home.path / LAYOUT_PATHS[layout][1]
    return home.query(db, f"SELECT * FROM {table}") if db.is_file() else []


@check("startup.layout.runs", title="memories.version picks the layout whose DB and folder a "
       "startup uses; dual_write runs both from v1 (from v2: as the release does)",
       rules=("LAYOUT-01", "LAYOUT-02"),
       level="MUST", area="startup", codex_since="0.155.0")
@pytest.mark.parametrize("case", list(LAYOUT_RUNS))
def test_layout_runs(impl: Adapter, home: CodexHome, model: MockModel,
                     run_startup: StartupRunner, case: str) -> None:
    keys, listed = LAYOUT_RUNS[case]
    runs = listed if listed is not None else \
        releases.get(impl.handshake.follows[0]).dual_write_runs[keys["version"]]
    consolidation.configure(home, keys)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    for layout in ("v1", "v2"):
        folder, db = LAYOUT_PATHS[layout]
        stage1 = [r for r in _layout_rows(home, layout, "jobs") if r["kind"] == "memory_stage1"]
        outputs = _layout_rows(home, layout, "stage1_outputs")
        if layout in runs:
            assert [r["job_key"] for r in stage1] == [thread.id], \
                f"{db} does not hold the thread's stage-1 job ({case})"
            assert [r["thread_id"] for r in outputs] == [thread.id], \
                f"{db} does not hold the thread's stage-1 output ({case})"
            summaries = home.path / folder / "rollout_summaries"
            assert summaries.is_dir() and any(thread.id in p.read_text(encoding="utf-8")
                                              for p in summaries.glob("*.md")), \
                f"{folder}/rollout_summaries/ holds no summary of the thread ({case})"
        else:
            assert stage1 == [] and outputs == [], \
                f"{db} got stage-1 jobs or outputs, but layout {layout} must not run ({case})"

"""START / EXT: when a startup runs at all, and what it prepares before Phase 1."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.checks.stage1 import VALID_OUTPUT, configure, extracted_once
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome, Thread
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.verdicts import produced

PIPELINE_KINDS = ("stage1", "consolidation")
USER_NOTES = "# My own instructions\n\nKeep this file exactly as I wrote it.\n"
ELIGIBLE_AGO_MS = 8 * 3_600_000  # past the default 6-hour idle threshold, within 10 days


def _assert_nothing_ran(home: CodexHome, model: MockModel, guard: str) -> None:
    kinds = [r.kind for r in model.requests if r.kind in PIPELINE_KINDS]
    assert kinds == [], f"{guard}, yet the pipeline sent model requests (their kinds)"
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


@check("startup.guard.no-state-db", title="a home without a state database runs no pipeline",
       rules="START-02", level="SHOULD", area="startup", needs=("startup.without-state-db",))
def test_no_state_db(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    run_startup(home)
    _assert_nothing_ran(home, model, "without a state database")
    assert not home.state_db.exists(), "the pipeline created a state database"
    _assert_control_runs(home, model, run_startup, _eligible_home(home),
                         "a second startup after the state database was added")


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

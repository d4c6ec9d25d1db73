"""START / EXT: when a startup runs at all, and what it prepares before Phase 1."""

from __future__ import annotations

import pytest

from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel
from memconform.registry import check

PIPELINE_KINDS = ("stage1", "consolidation")
USER_NOTES = "# My own instructions\n\nKeep this file exactly as I wrote it.\n"


def _assert_nothing_ran(home: CodexHome, model: MockModel) -> None:
    pipeline = [r for r in model.requests if r.kind in PIPELINE_KINDS]
    assert not pipeline, f"pipeline requests were sent: {[r.kind for r in pipeline]}"
    assert not home.memory_root.exists(), "the memory root was created"
    rows = home.query(home.memories_db, "SELECT kind, job_key, status FROM jobs")
    assert rows == [], f"job rows were written: {rows}"


def _eligible_home(home: CodexHome) -> CodexHome:
    """A home with one thread that a running pipeline would extract."""
    home.add_thread()
    return home


@check("startup.guard.feature-off", title="with the memories feature off nothing runs",
       rules="START-01", level="MUST", area="startup")
@pytest.mark.parametrize("feature", ["absent", "false"])
def test_feature_off(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      feature: str) -> None:
    _eligible_home(home)
    home.write_config(feature=None if feature == "absent" else False)
    run_startup(home)
    _assert_nothing_ran(home, model)


@check("startup.guard.ephemeral", title="an ephemeral session runs no pipeline",
       rules="START-01", level="MUST", area="startup")
def test_ephemeral(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    _eligible_home(home)
    run_startup(home, ephemeral=True)
    _assert_nothing_ran(home, model)


@check("startup.guard.subagent", title="a sub-agent session runs no pipeline",
       rules="START-01", level="SHOULD", area="startup", needs=("session.subagent",))
def test_subagent(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    _eligible_home(home)
    run_startup(home, subagent=True)
    _assert_nothing_ran(home, model)


@check("startup.guard.no-state-db", title="a home without a state database runs no pipeline",
       rules="START-02", level="SHOULD", area="startup", needs=("startup.without-state-db",))
def test_no_state_db(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    run_startup(home)
    _assert_nothing_ran(home, model)
    assert not home.state_db.exists(), "the pipeline created a state database"


@check("startup.root.created", title="a startup creates the memory root", rules="START-03",
       level="MUST", area="startup", smoke=True)
def test_root_created(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    assert not home.memory_root.exists()
    run_startup(home)
    assert home.memory_root.is_dir()


@check("startup.root.generate-off", title="generate_memories = false does not stop the "
       "startup itself", rules="START-01", level="MUST", area="startup")
def test_root_generate_off(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    home.write_config(memories={"generate_memories": False})
    run_startup(home)
    assert home.memory_root.is_dir()


@check("startup.ext.seeded", title="the ad-hoc extension instructions are seeded",
       rules="EXT-01", level="MUST", area="startup")
def test_ext_seeded(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    run_startup(home)
    instructions = home.memory_root / "extensions" / "ad_hoc" / "instructions.md"
    assert instructions.is_file(), "extensions/ad_hoc/instructions.md is missing"
    assert instructions.read_text(encoding="utf-8").strip(), "instructions.md is empty"


@check("startup.ext.not-overwritten", title="existing extension instructions are never "
       "overwritten", rules="EXT-01", level="MUST", area="startup")
def test_ext_not_overwritten(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    instructions = home.memory_root / "extensions" / "ad_hoc" / "instructions.md"
    instructions.parent.mkdir(parents=True)
    instructions.write_text(USER_NOTES, encoding="utf-8")
    run_startup(home)
    assert instructions.read_text(encoding="utf-8") == USER_NOTES

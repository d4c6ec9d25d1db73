"""EXT-02, EXT-03: dated extension resources are retired during the sync, and any change under
`extensions/` is work for the consolidation agent (fixtures/phase2/resources.json)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memconform.checks.consolidation import (
    DIFF_FILE,
    DONE,
    Capture,
    agent_finishes,
    configure,
    consolidations,
    expire_cooldown,
    global_job,
    seed_memory,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, message
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

CASES = fixture_json("phase2", "resources.json")["cases"]
EXTENSION = Path("extensions") / "chronicle"


def resource(home: CodexHome, clock: HarnessClock, case: dict[str, Any]) -> Path:
    """Write the case's extension and resource; the resource's path relative to the root."""
    root = home.memory_root
    (root / EXTENSION / "resources").mkdir(parents=True, exist_ok=True)
    if case.get("instructions", True):
        (root / EXTENSION / "instructions.md").write_text("How to read the chronicle.\n")
    name = case.get("name")
    if name is None:
        stamp = datetime.fromtimestamp(clock.now - case["age_s"], UTC)
        name = f"{stamp:%Y-%m-%dT%H-%M-%S}{case.get('suffix', '-note.md')}"
    rel: Path = EXTENSION / "resources" / str(case.get("subdir", "")) / str(name)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    if case.get("symlink"):
        (root / EXTENSION / "entry.md").write_text("A chronicle entry.\n")
        (root / rel).symlink_to(Path("..") / "entry.md")
    else:
        (root / rel).write_text("A chronicle entry.\n")
    if "kept_too" in case:
        (root / EXTENSION / "resources" / case["kept_too"]).write_text("An index.\n")
    return rel


def consolidated(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 capture: Capture | None = None) -> None:
    """One startup whose agent finishes at once; its consolidation must succeed."""
    agent_finishes(model, message(DONE).probed(capture) if capture else None)
    run_startup(home)
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["status"] == "done", \
        "the startup's consolidation (the agent finishing at once) did not leave the job done"


def captured_run(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> list[str]:
    """One consolidation; the `- X path` status lines of the diff file the agent started with."""
    capture = Capture(home)
    agent_finishes(model, message(DONE).probed(capture))
    run_startup(home)
    if not capture.arrived:
        fail("the startup sent no consolidation agent request to the model")
    assert model.probe_errors == [], f"{DIFF_FILE} could not be read when the agent started"
    if capture.diff_text is None:
        fail(f"{DIFF_FILE} was not on disk when the consolidation agent started")
    if "## Status" not in capture.diff_text:
        fail(f"{DIFF_FILE} has no ## Status section")
    section = capture.diff_text.split("## Status", 1)[1].split("## Diff", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def run_case(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             clock: HarnessClock, case: dict[str, Any]) -> None:
    configure(home)
    seed_memory(home)
    if "advance_s" in case:  # 0.999: now_ms = E + 999, "now" still E (clock.now floors)
        clock.advance(case["advance_s"])
    rel = resource(home, clock, case)
    lines = captured_run(home, model, run_startup)
    present = (home.memory_root / rel).is_symlink() or (home.memory_root / rel).exists()
    assert present is not case["deleted"], \
        f"the sync {'kept' if case['deleted'] else 'deleted'} the extension resource {rel}"
    if "kept_too" in case:
        kept = EXTENSION / "resources" / case["kept_too"]
        assert (home.memory_root / kept).exists(), f"the sync deleted {kept}, which is undated"
    deleted_line = f"- D {rel.as_posix()}"
    assert (deleted_line in lines) is case["deleted"], \
        f"{DIFF_FILE} does not list the retired resource {rel} as deleted" if case["deleted"] \
        else f"{DIFF_FILE} lists the kept resource {rel} as deleted"


@check("p2.ext.retention", title="extension resources dated seven days ago or more are "
       "deleted; undated, non-Markdown, nested or unmanaged files stay", rules="EXT-02",
       level="MUST", area="phase2")
@pytest.mark.parametrize("case", [c for c in CASES if not c.get("exact_clock")],
                         ids=[c["id"] for c in CASES if not c.get("exact_clock")])
def test_retention(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock, case: dict[str, Any]) -> None:
    run_case(home, model, run_startup, clock, case)


@check("p2.ext.retention-bound", title="the seven-day bound is inclusive", rules="EXT-02",
       level="SHOULD", area="phase2", needs=("clock.inject",))
@pytest.mark.parametrize("case", [c for c in CASES if c.get("exact_clock")],
                         ids=[c["id"] for c in CASES if c.get("exact_clock")])
def test_retention_bound(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         clock: HarnessClock, case: dict[str, Any]) -> None:
    run_case(home, model, run_startup, clock, case)


@check("p2.ext.dirty", title="a new extension resource alone starts a consolidation",
       rules="EXT-03", level="MUST", area="phase2")
def test_dirty(home: CodexHome, model: MockModel, run_startup: StartupRunner,
               clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    consolidated(home, model, run_startup)
    expire_cooldown(home)
    model.reset()
    rel = resource(home, clock, {"age_s": 60})
    lines = captured_run(home, model, run_startup)
    assert consolidations(model) == 1, \
        "the new extension resource alone did not start exactly one agent conversation"
    assert f"- A {rel.as_posix()}" in lines, \
        f"{DIFF_FILE} does not list the new extension resource {rel} as added"

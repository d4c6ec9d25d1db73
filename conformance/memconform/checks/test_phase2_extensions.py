"""EXT-02, EXT-03: dated extension resources are retired during the sync, and any change under
`extensions/` is work for the consolidation agent (fixtures/phase2/resources.json)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memconform.checks.consolidation import (
    captured_run,
    configure,
    consolidations,
    diff_status,
    seed_memory,
    succeed_once,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel
from memconform.registry import check
from memconform.resources import fixture_json

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
    (root / rel).write_text("A chronicle entry.\n")
    return rel


def run_case(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             clock: HarnessClock, case: dict[str, Any]) -> None:
    configure(home)
    seed_memory(home)
    rel = resource(home, clock, case)
    capture = captured_run(home, model, run_startup)
    assert (home.memory_root / rel).exists() is not case["deleted"], \
        f"{rel} was {'kept' if case['deleted'] else 'deleted'}"
    deleted_line = f"- D {rel.as_posix()}"
    assert (deleted_line in diff_status(capture.diff)) is case["deleted"]


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
    succeed_once(home, model, run_startup)
    rel = resource(home, clock, {"age_s": 60})
    capture = captured_run(home, model, run_startup)
    assert consolidations(model) == 1, "the extension change did not start an agent"
    assert f"- A {rel.as_posix()}" in diff_status(capture.diff)

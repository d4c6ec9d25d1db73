"""PATCH: the consolidation agent's `apply_patch` tool, case by case from
fixtures/phase2/apply_patch.json. Each case seeds files in the memory root before the startup,
has the scripted agent send one patch, and compares the root's own files (pipeline files and
git metadata left out) with the expected end state, both when the tool answers and after the
run. A refused patch must leave every file as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memconform.checks.consolidation import (
    DIFF_FILE,
    RAW,
    SUMMARIES,
    agent_patches,
    configure,
    seed_memory,
)
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

DATA = fixture_json("phase2", "apply_patch.json")
CASES: list[dict[str, Any]] = DATA["cases"]
RULES = ("PATCH-01", "PATCH-02", "PATCH-03", "PATCH-04", "PATCH-05", "PATCH-06")
# What the pipeline itself keeps in the root; a case never names these.
# the pipeline's own entries of the memory root (`.codex-baseline/`: Codex 0.171.0's git lock)
PIPELINE = {RAW, DIFF_FILE, SUMMARIES, ".git", ".codex-baseline", "extensions",
            "memories_extensions"}


def patch_text(case: dict[str, Any]) -> str:
    """`patch` verbatim, or `patch_lines` joined by newlines with a final one."""
    if "patch" in case:
        return str(case["patch"])
    return "\n".join(case["patch_lines"]) + "\n"


def seed_files(root: Path, files: dict[str, str]) -> None:
    """Write each file's exact characters (no newline translation)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def own_files(root: Path) -> dict[str, str]:
    """Every regular file under the root outside the pipeline's own, with its exact text."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d not in PIPELINE]
        for name in filenames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if rel not in PIPELINE and path.is_file() and not path.is_symlink():
                found[rel] = path.read_bytes().decode("utf-8", "replace")
    return found


def tool_outputs(model: MockModel) -> list[Any]:
    return [i.get("output") for r in model.of_kind("consolidation")
            for i in r.body.get("input") or []
            if isinstance(i, dict) and i.get("call_id") == "call_patch"
            and str(i.get("type", "")).endswith("_output")]


@check("p2.patch.case", title="apply_patch turns the seeded files into the expected ones, or "
       "refuses the patch and leaves every file untouched",
       rules=RULES, level="MUST", area="phase2")
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(home: CodexHome, model: MockModel, run_startup: StartupRunner,
              case: dict[str, Any]) -> None:
    configure(home)
    seed_memory(home)
    root = home.memory_root
    root.mkdir(parents=True, exist_ok=True)
    seed_files(root, case["before"])
    expected = case["before"] if case.get("refused") else case["after"]
    seen: list[dict[str, str]] = []
    agent_patches(model, patch_text(case), then=lambda: seen.append(own_files(root)))
    run_startup(home)
    assert not model.probe_errors, f"probing the files failed: {model.probe_errors}"
    assert seen, "the agent never got the patch's result back (no second request)"
    assert tool_outputs(model), "the patch's result was not sent back to the model"
    verb = "refused" if case.get("refused") else "applied"
    assert seen[0] == expected, (
        f"when the tool answered, the files were not those of the {verb} patch")
    after = {k: v for k, v in own_files(root).items() if k not in model.artifacts_written}
    assert after == expected, "the files changed again after the tool answered"
    if case.get("refused"):
        listed = applied_lines(case, tool_outputs(model)[0])
        assert not listed, ("the refused patch's result lists changed files as an applied "
                            f"patch's does ({listed}): the model must be told it was refused")


def applied_lines(case: dict[str, Any], output: Any) -> list[str]:
    """The lines of `output` that name a file of the patch as an applied patch's result
    does (`A <path>`, `M <path>`, `D <path>`, PATCH-04)."""
    paths = {line.split(": ", 1)[1].strip() for line in case.get("patch_lines", [])
             if line.startswith(("*** Add File: ", "*** Delete File: ", "*** Update File: ",
                                 "*** Move to: ")) and ": " in line}
    text = output if isinstance(output, str) else json.dumps(output)
    return [line.strip() for line in text.splitlines()
            if line.strip()[:2] in ("A ", "M ", "D ") and line.strip()[2:] in paths]


# applied cases and the change lines their result must hold: A added, M updated (a moved file
# under its new path), D deleted; one line per operation, in any order (0.144.6 lists the
# added files first, then the updated, then the deleted)
RESULT_LINES = {
    "add-file": ["A notes.md"],
    "delete-file": ["D a.md"],
    "move-with-edits": ["M archive/b.md"],
    "move-overwrites-destination": ["M b.md"],
    "delete-then-add-same-path": ["A a.md", "D a.md"],
    "two-updates-same-file": ["M a.md", "M a.md"],
    "update-context": ["M a.md"],
}
BY_NAME = {c["name"]: c for c in CASES}


@check("p2.patch.result", title="an applied patch's result names each changed file with its "
       "change letter (A, M, D)", rules="PATCH-04", level="SHOULD", area="phase2")
@pytest.mark.parametrize("name", sorted(RESULT_LINES))
def test_result(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                name: str) -> None:
    case = BY_NAME[name]
    configure(home)
    seed_memory(home)
    home.memory_root.mkdir(parents=True, exist_ok=True)
    seed_files(home.memory_root, case["before"])
    agent_patches(model, patch_text(case))
    run_startup(home)
    outputs = tool_outputs(model)
    assert outputs and isinstance(outputs[0], str), \
        "the patch's result was not sent back to the model as text"
    after = {k: v for k, v in own_files(home.memory_root).items()
             if k not in model.artifacts_written}
    assert after == case["after"], "the patch was not applied"
    letters = sorted(line.strip() for line in outputs[0].splitlines()
                     if len(line.strip()) > 2 and line.strip()[0] in "AMD"
                     and line.strip()[1] == " ")
    if letters != sorted(RESULT_LINES[name]):
        fail("the applied patch's result does not name each changed file once per operation "
             "as `A <path>`, `M <path>` or `D <path>`",
             expected=sorted(RESULT_LINES[name]), actual=letters)

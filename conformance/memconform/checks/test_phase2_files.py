"""FS: the input files a consolidation writes into the memory root, byte for byte
(fixtures/phase2/stems.json for the summary file names)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from memconform.adapters import Adapter
from memconform.checks.consolidation import (
    EMPTY_RAW,
    RAW,
    SUMMARIES,
    agent_finishes,
    configure,
    global_job,
    seed_memory,
    summary_files,
)
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import ARTIFACTS, MockModel
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.snapshots import tree
from memconform.verdicts import fail, only, produced

STEMS = fixture_json("phase2", "stems.json")["cases"]
RAW_HEADER = ("# Raw Memories\n\nMerged stage-1 raw memories (stable ascending thread-id "
              "order):\n\n")
FIRST = "0194f5a6-89ab-7cde-8123-456789abcdef"
SECOND = "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"


def rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def facts(home: CodexHome, thread_id: str) -> dict[str, Any]:
    thread = only(home.query(home.state_db, "SELECT cwd, rollout_path, git_branch FROM threads "
                             "WHERE id = ?", (thread_id,)), f"threads row of {thread_id}")
    output = only(home.query(home.memories_db, "SELECT * FROM stage1_outputs WHERE "
                             "thread_id = ?", (thread_id,)), f"stage1_outputs row of {thread_id}")
    return {**thread, **output}


def run_to_success(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    """One startup whose consolidation (the agent finishing at once) must succeed."""
    agent_finishes(model)
    run_startup(home)
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["status"] == "done", \
        "the startup's consolidation (the agent finishing at once) did not leave the job done"


def raw_text(home: CodexHome) -> str:
    return produced(home.memory_root / RAW, RAW)


END_TO_END = [c for c in STEMS if not c.get("unit_only")]


@check("p2.fs.stem", title="summary files are named <id time>-<base-62 hash>[-<clean slug>]",
       rules="FS-06", level="MUST", area="phase2")
@pytest.mark.parametrize("case", END_TO_END, ids=[c["id"] for c in END_TO_END])
def test_stem(home: CodexHome, model: MockModel, run_startup: StartupRunner,
              case: dict[str, Any]) -> None:
    configure(home)
    seed_memory(home, thread_id=case["thread_id"], slug=case["slug"])
    run_to_success(home, model, run_startup)
    expected = expected_stem(case, facts(home, case["thread_id"])["source_updated_at"])
    assert summary_files(home) == [f"{expected}.md"], f"{SUMMARIES}/ does not hold exactly the " \
        "one summary file named <id time>-<base-62 hash>[-<clean slug>].md"
    if home.layout == "v1":  # layout v2 has no raw_memories.md to name it
        assert f"rollout_summary_file: {expected}.md\n" in raw_text(home), \
            f"{RAW} does not name the summary file {expected}.md as the thread's " \
            "rollout_summary_file"


SOURCE_S = 1_700_000_000  # source_updated_at sent with the vectors whose time is the source's


def expected_stem(case: dict[str, Any], source_s: int) -> str:
    if "stem" in case:
        return str(case["stem"])
    stamp = datetime.fromtimestamp(source_s, UTC)
    return f"{stamp:%Y-%m-%dT%H-%M-%S}-{case['hash']}{case['suffix']}"


@check("p2.fs.stem-function", title="files.stem names every FS-06 vector, the thread ids no "
       "startup writes included", rules="FS-06", level="SHOULD", area="phase2",
       needs=("files.stem",))
@pytest.mark.parametrize("case", STEMS, ids=[c["id"] for c in STEMS])
def test_stem_function(impl: Adapter, case: dict[str, Any]) -> None:
    got = impl.call("files.stem", {"thread_id": case["thread_id"], "source_updated_at": SOURCE_S,
                                   "rollout_slug": case["slug"]})
    assert got["stem"] == expected_stem(case, SOURCE_S), \
        "files.stem did not name the summary file <id time>-<base-62 hash>[-<clean slug>]"


@check("p2.fs.raw-memories-trim-stops", title="the trim of a raw memory stops at the first "
       "character that is not Unicode white space, an information separator included",
       rules="FS-02", level="MUST", area="phase2", layout="v1")
def test_raw_memories_trim_stops(home: CodexHome, model: MockModel,
                                 run_startup: StartupRunner) -> None:
    """U+001F is no Unicode White_Space (Python's str.strip() takes it all the same): the NBSP
    before it stays too."""
    configure(home)
    seed_memory(home, raw="\u3000- kept memory\u00a0\u001f")
    run_to_success(home, model, run_startup)
    assert "\n\n- kept memory\u00a0\u001f\n\n" in raw_text(home), f"{RAW} trimmed the raw " \
        "memory past a character that is not Unicode white space (a trailing U+001F, with NBSP " \
        "before it, must stay)"


def stem(case_id: str) -> str:
    return str(next(c["stem"] for c in STEMS if c["id"] == case_id))


@check("p2.fs.raw-memories", title="raw_memories.md has the header, then one section per "
       "thread in ascending id order with its fields and the trimmed memory", rules=("FS-02",
                                                                                      "FS-03"),
       level="MUST", area="phase2", layout="v1")
def test_raw_memories(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, thread_id=SECOND, age_s=3 * 3600, slug="deploy_notes",
                raw="- Deploys go through `make release`.", git_branch="main")
    seed_memory(home, thread_id=FIRST, age_s=5 * 3600, slug=None,
                raw="\n\n  - The user prefers tabs.\n- Tests run with tox.  \n\t\n")
    run_to_success(home, model, run_startup)
    expected = RAW_HEADER
    for thread_id, name, body in ((FIRST, stem("v7-no-slug"),
                                   "- The user prefers tabs.\n- Tests run with tox."),
                                  (SECOND, stem("other-v7-id"),
                                   "- Deploys go through `make release`.")):
        row = facts(home, thread_id)
        expected += (f"## Thread `{thread_id}`\nupdated_at: {rfc3339(row['source_updated_at'])}\n"
                     f"cwd: {row['cwd']}\nrollout_path: {row['rollout_path']}\n"
                     f"rollout_summary_file: {name}.md\n\n{body}\n\n")
    assert raw_text(home) == expected, f"{RAW} is not the header, then one section per " \
        "thread in ascending id order with its fields and its trimmed memory"


@check("p2.fs.raw-memories-unicode-trim", title="raw_memories.md trims Unicode white space "
       "around each memory; a memory of only non-ASCII white space is still selected and has "
       "an empty body", rules=("FS-02", "P2-SEL-01"), level="MUST", area="phase2", layout="v1")
def test_raw_memories_unicode_trim(home: CodexHome, model: MockModel,
                                   run_startup: StartupRunner) -> None:
    configure(home)
    # eligible: NBSP, U+3000 and U+2028 are not in P2-SEL-01's ASCII set; FS-02 then strips
    # them all, leaving an empty body
    seed_memory(home, thread_id=FIRST, age_s=5 * 3600, slug=None,
                raw="\u00a0\u3000\u2028", summary=" ")
    seed_memory(home, thread_id=SECOND, age_s=3 * 3600, slug="deploy_notes",
                raw="\u3000\u00a0- Deploys use make.\u2028\u00a0\n")
    run_to_success(home, model, run_startup)
    expected = RAW_HEADER
    for thread_id, name, body in ((FIRST, stem("v7-no-slug"), ""),
                                  (SECOND, stem("other-v7-id"), "- Deploys use make.")):
        row = facts(home, thread_id)
        expected += (f"## Thread `{thread_id}`\nupdated_at: {rfc3339(row['source_updated_at'])}\n"
                     f"cwd: {row['cwd']}\nrollout_path: {row['rollout_path']}\n"
                     f"rollout_summary_file: {name}.md\n\n{body}\n\n")
    got = raw_text(home)
    if f"## Thread `{FIRST}`" not in got:
        fail(f"{RAW} has no section for the memory whose raw text is only NBSP, U+3000 and "
             "U+2028: it was treated as blank, but only ASCII white space makes a payload blank")
    assert got == expected, f"{RAW} does not strip leading and trailing Unicode white space " \
        "(NBSP, U+3000, U+2028) from each raw memory, leaving the all-white-space one with an " \
        "empty body"


@check("p2.fs.raw-memories-empty", title="with nothing selected raw_memories.md is exactly the "
       "placeholder", rules="FS-02", level="MUST", area="phase2", layout="v1")
def test_raw_memories_empty(home: CodexHome, model: MockModel,
                            run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    run_to_success(home, model, run_startup)
    raw_text(home)
    assert (home.memory_root / RAW).read_bytes() == EMPTY_RAW.encode(), \
        f"with nothing selected {RAW} is not exactly the no-raw-memories placeholder"
    assert summary_files(home) == [], f"with nothing selected {SUMMARIES}/ holds summary files"


SUMMARY_CASES = {
    "with-branch": ("feature/memory-branch", "# Release work\nShipped 1.2."),
    "without-branch": (None, "# Release work\nShipped 1.2."),
    "summary-kept-verbatim": (None, "  padded summary with trailing blank line\n\n"),
}


@check("p2.fs.summary-file", title="a summary file lists thread_id, updated_at, rollout_path, "
       "cwd, the branch if any, a blank line and the summary verbatim", rules=("FS-03",
                                                                               "FS-04"),
       level="MUST", area="phase2")
@pytest.mark.parametrize("case", sorted(SUMMARY_CASES))
def test_summary_file(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      case: str) -> None:
    branch, summary = SUMMARY_CASES[case]
    configure(home)
    seed_memory(home, thread_id=FIRST, slug=None, summary=summary, git_branch=branch)
    run_to_success(home, model, run_startup)
    row = facts(home, FIRST)
    header = (f"thread_id: {FIRST}\nupdated_at: {rfc3339(row['source_updated_at'])}\n"
              f"rollout_path: {row['rollout_path']}\ncwd: {row['cwd']}\n")
    if branch is not None:
        header += f"git_branch: {branch}\n"
    name = f"{SUMMARIES}/{stem('v7-no-slug')}.md"
    assert produced(home.memory_root / name, name) == f"{header}\n{summary}\n", \
        f"{name} is not thread_id, updated_at, rollout_path, cwd, the branch if any, a blank " \
        "line and the summary verbatim"


@check("p2.fs.updated-at", title="updated_at is RFC 3339 in whole seconds with +00:00",
       rules="FS-03", level="SHOULD", area="phase2", needs=("clock.inject",))
def test_updated_at(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, thread_id=FIRST, slug=None, age_s=2 * 3600 + 1)
    run_to_success(home, model, run_startup)
    name = f"{SUMMARIES}/{stem('v7-no-slug')}.md"
    assert "updated_at: 2026-06-01T09:59:59+00:00\n" in produced(home.memory_root / name, name), \
        f"{name} does not give updated_at as 2026-06-01T09:59:59+00:00 (RFC 3339, whole " \
        "seconds, +00:00)"
    if home.layout == "v1":  # layout v2 has no raw_memories.md
        assert "updated_at: 2026-06-01T09:59:59+00:00\n" in raw_text(home), \
            f"{RAW} does not give updated_at as 2026-06-01T09:59:59+00:00 (RFC 3339, whole " \
            "seconds, +00:00)"


@check("p2.fs.stale-summaries", title="summaries of threads no longer selected are removed; "
       "entries that are not .md files stay", rules="FS-05", level="MUST", area="phase2")
def test_stale_summaries(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, thread_id=FIRST, slug=None)
    folder = home.memory_root / SUMMARIES
    folder.mkdir(parents=True)
    for name in (f"{SECOND}.md", "2025-01-01T00-00-00-abcd-old.md", "notes.txt", "keep.md.bak"):
        (folder / name).write_text("old\n", encoding="utf-8")
    run_to_success(home, model, run_startup)
    assert summary_files(home) == sorted([f"{stem('v7-no-slug')}.md", "notes.txt",
                                          "keep.md.bak"]), \
        f"{SUMMARIES}/ does not hold exactly the selected thread's summary and the entries " \
        "that are not .md files"


@check("p2.fs.stale-summary-unremovable", title="an .md entry that cannot be removed does not "
       "stop the sync", rules="FS-05", level="SHOULD", area="phase2")
def test_stale_summary_unremovable(home: CodexHome, model: MockModel,
                                   run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, thread_id=FIRST, slug=None)
    (home.memory_root / SUMMARIES / "stale.md").mkdir(parents=True)
    run_to_success(home, model, run_startup)
    assert f"{stem('v7-no-slug')}.md" in summary_files(home), \
        "an unremovable stale .md entry stopped the selected thread's summary file being written"
    if home.layout == "v1":  # layout v2 has no raw_memories.md
        assert raw_sections_of(home) == [FIRST], \
            f"an unremovable stale .md entry stopped {RAW} listing the selected thread"


def raw_sections_of(home: CodexHome) -> list[str]:
    return [line[len("## Thread `"):-1] for line in raw_text(home).splitlines()
            if line.startswith("## Thread `")]


OUTPUTS = {"MEMORY.md": "# Memory\n- kept\n", "memory_summary.md": ARTIFACTS["memory_summary.md"],
           "skills/demo/SKILL.md": "---\nname: demo\n---\nkept\n"}


@check("p2.fs.outputs-kept", title="with nothing selected MEMORY.md, memory_summary.md and "
       "skills/ are left for the agent", rules="FS-07", level="MUST", area="phase2")
def test_outputs_kept(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    for name, text in OUTPUTS.items():
        (home.memory_root / name).parent.mkdir(parents=True, exist_ok=True)
        (home.memory_root / name).write_text(text, encoding="utf-8")
    (home.memory_root / SUMMARIES).mkdir()
    (home.memory_root / SUMMARIES / f"{stem('v7-no-slug')}.md").write_text("gone\n")
    run_to_success(home, model, run_startup)
    for name, text in OUTPUTS.items():
        path = home.memory_root / name
        assert path.is_file(), \
            f"the consolidation deleted {name}, which it must leave for the agent"
        assert path.read_text(encoding="utf-8") == text, \
            f"the consolidation changed {name}, which it must leave for the agent"
    assert summary_files(home) == [], \
        f"with nothing selected the stale summary file is still in {SUMMARIES}/"


@check("p2.fs.tree", layout="v1", title="the memory root after one consolidation (snapshot)",
       rules=("FS-01", "FS-02", "FS-04"), level="MUST", area="phase2")
def test_tree(home: CodexHome, model: MockModel, run_startup: StartupRunner,
              snapshot: SnapshotAssertion) -> None:
    _tree_after_one_consolidation(home, model, run_startup, snapshot, second_slug=None)


@check("p2.v2.tree", title="layout v2: the memory root after one consolidation (snapshot)",
       rules=("FS-01", "FS-04", "P2-V2-01"), level="MUST", area="phase2",
       codex_since="0.155.0", layout="v2")
def test_v2_tree(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 snapshot: SnapshotAssertion) -> None:
    # stage 1 of layout v2 stores no memory without a slug, so both have one
    _tree_after_one_consolidation(home, model, run_startup, snapshot, second_slug="deploys")


def _tree_after_one_consolidation(home: CodexHome, model: MockModel,
                                  run_startup: StartupRunner, snapshot: SnapshotAssertion,
                                  second_slug: str | None) -> None:
    """Two memories, one consolidation: the memory root (extensions/ and the agent's own
    files aside) against the snapshot."""
    configure(home)
    seed_memory(home, thread_id=FIRST, slug="Tabs & Tox", raw="- The user prefers tabs.",
                summary="# Tooling\nThe user set up tox.")
    seed_memory(home, thread_id=SECOND, slug=second_slug, raw="- Deploys use make.",
                summary="# Deploys\nA release.", git_branch="main")
    run_to_success(home, model, run_startup)
    files = {k: v for k, v in tree(home.memory_root).items()
             if not k.startswith("extensions/") and k not in model.artifacts_written}
    assert files == snapshot, f"the memory root of layout {home.layout} after one " \
        "consolidation (extensions/ aside) differs from the snapshot"


@check("p2.v2.no-raw-memories", title="layout v2: a consolidation writes the rollout summaries "
       "and no raw_memories.md", rules=("P2-V2-01",), level="MUST", area="phase2",
       codex_since="0.155.0", layout="v2")
def test_v2_no_raw_memories(home: CodexHome, model: MockModel, run_startup: StartupRunner
                            ) -> None:
    configure(home)
    thread = seed_memory(home, slug="topic")
    run_to_success(home, model, run_startup)
    assert not (home.memory_root / "raw_memories.md").exists(), \
        "a consolidation of layout v2 wrote raw_memories.md"
    files = summary_files(home)
    assert len(files) == 1 and thread in (home.memory_root / SUMMARIES / files[0]).read_text(
        encoding="utf-8"), f"{SUMMARIES}/ does not hold the one selected memory's summary file"
    sent = [json.dumps(r.body) for r in model.of_kind("consolidation")]
    assert sent, "no consolidation request was sent"
    assert not any("raw_memories.md" in body for body in sent), \
        "the consolidation agent was told about raw_memories.md in layout v2"

"""GIT, DIFF: the memory root as a git workspace, its baseline commit, and the diff file the
consolidation agent reads first (captured when the agent's first request arrives)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from memconform.checks.consolidation import (
    DIFF_FILE,
    DONE,
    RAW,
    SUMMARIES,
    Capture,
    add_file,
    agent_finishes,
    agent_patches,
    captured_run,
    commits,
    committed_files,
    configure,
    consolidations,
    diff_status,
    expire_cooldown,
    git,
    global_job,
    one_memory_run,
    run_to_success,
    seed_memory,
    status,
    succeed_once,
    summary_files,
)
from memconform.checks.stage1 import WALL_TOLERANCE_S
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, http_error, message
from memconform.registry import check
from memconform.snapshots import Masker

IDENTITY = "Codex <noreply@openai.com>"
SUBJECT = "Initialize Codex git baseline"
TRAILER = f"Co-authored-by: {IDENTITY}"


def stem_of(home: CodexHome, thread_id: str) -> str:
    [name] = [n for n in summary_files(home) if thread_id in
              (home.memory_root / SUMMARIES / n).read_text(encoding="utf-8")]
    return name


@check("p2.git.first-baseline", title="the first consolidation commits the root as it was "
       "before the inputs were written, so every input shows as added", rules=("GIT-01",
                                                                                "GIT-03"),
       level="MUST", area="phase2")
def test_first_baseline(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    seen: dict[str, Any] = {}
    capture = Capture(home)

    def probe() -> None:
        capture()
        seen["commits"] = commits(home.memory_root)
        seen["files"] = committed_files(home.memory_root)

    agent_finishes(model, message(DONE).probed(probe))
    run_startup(home)
    assert not model.probe_errors, model.probe_errors
    assert len(seen["commits"]) == 1, "expected exactly one baseline commit"
    assert RAW not in seen["files"] and not any(f.startswith(f"{SUMMARIES}/")
                                                for f in seen["files"])
    assert diff_status(capture.diff) == [f"- A {RAW}",
                                         f"- A {SUMMARIES}/{stem_of(home, thread)}"]


@check("p2.git.commit", title="the baseline is one commit \"Initialize Codex git baseline\" "
       "with the Codex co-author trailer, by Codex <noreply@openai.com> at UTC", rules="GIT-02",
       level="MUST", area="phase2")
def test_commit(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                clock: HarnessClock) -> None:
    one_memory_run(home, model, run_startup)
    root = home.memory_root
    assert len(commits(root)) == 1
    fields = git(root, "log", "-1", "--format=%an <%ae>%n%cn <%ce>%n%at%n%ct%n%ai%n%B").split(
        "\n")
    author, committer, authored, committed, iso = fields[:5]
    message_lines = [line for line in fields[5:] if line]
    assert author == IDENTITY and committer == IDENTITY
    assert iso.endswith("+0000"), f"commit time zone: {iso}"
    assert message_lines == [SUBJECT, TRAILER], f"commit message: {message_lines}"
    assert git(root, "log", "-1", "--format=%B").startswith(f"{SUBJECT}\n\n{TRAILER}")
    for value in (int(authored), int(committed)):
        if clock.injected:
            assert value == clock.now, "commit time is not the injected now"
        else:
            assert abs(value - time.time()) < WALL_TOLERANCE_S


@check("p2.git.clean-after-success", title="after a success the tree is committed, clean, and "
       "the diff file is gone", rules=("GIT-04", "DIFF-01"), level="MUST", area="phase2")
def test_clean_after_success(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    capture = captured_run(home, model, run_startup)
    assert capture.diff_text is not None, "the diff file was not written for the agent"
    root = home.memory_root
    assert not (root / DIFF_FILE).exists(), "the diff file survived the success"
    assert status(root) == "", f"uncommitted changes after success:\n{status(root)}"
    files = committed_files(root)
    assert RAW in files and f"{SUMMARIES}/{stem_of(home, thread)}" in files
    assert DIFF_FILE not in files


@check("p2.git.history-reset", title="every success replaces the history with one fresh "
       "commit holding the agent's outputs", rules=("GIT-04", "AGENT-04"), level="MUST",
       area="phase2")
def test_history_reset(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    succeed_once(home, model, run_startup)
    first = commits(home.memory_root)
    seed_memory(home, age_s=3 * 3600)
    agent_patches(model, add_file("MEMORY.md", "# Memory\n- second run"))
    run_startup(home)
    job = global_job(home)
    assert job is not None and job["status"] == "done", f"second consolidation: {job}"
    root = home.memory_root
    now = commits(root)
    assert len(now) == 1 and now != first, "history was kept instead of one fresh commit"
    assert "MEMORY.md" in committed_files(root) and status(root) == ""


@check("p2.git.failure-stays-dirty", title="after a failed consolidation the synced inputs "
       "stay uncommitted and the diff file stays", rules=("GIT-04", "P2-RUN-05"),
       level="MUST", area="phase2")
def test_failure_stays_dirty(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup, http_error(500))
    root = home.memory_root
    assert (root / DIFF_FILE).is_file(), "the diff file was removed after a failure"
    assert RAW not in committed_files(root), "the inputs were committed after a failure"
    assert RAW in status(root)


@check("p2.git.baseline-kept", title="a usable baseline is kept: a hand edit since the last "
       "success shows as modified", rules=("GIT-01", "GIT-03"), level="MUST", area="phase2")
def test_baseline_kept(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    agent_patches(model, add_file("MEMORY.md", "# Memory\n- old"))
    run_startup(home)
    expire_cooldown(home)
    model.reset()
    (home.memory_root / "MEMORY.md").write_text("# Memory\n- edited by hand\n")
    capture = captured_run(home, model, run_startup)
    assert diff_status(capture.diff) == ["- M MEMORY.md"]
    assert "-- old" in capture.diff and "+- edited by hand" in capture.diff


UNUSABLE = {  # name: what is at <root>/.git before the run
    "git-is-a-file": {"": "gitdir: /nonexistent\n"},
    "git-is-empty": {},
    "git-without-head": {"HEAD": "garbage\n"},
}


@check("p2.git.unusable-recreated", title="unusable git metadata is replaced by a fresh "
       "baseline and the run goes on", rules="GIT-01", level="MUST", area="phase2")
@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_unusable_recreated(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                            case: str) -> None:
    configure(home)
    seed_memory(home)
    home.memory_root.mkdir(parents=True)
    spec = UNUSABLE[case]
    metadata = home.memory_root / ".git"
    if "" in spec:
        metadata.write_text(spec[""])
    else:
        metadata.mkdir()
        for name, text in spec.items():
            (metadata / name).write_text(text)
    run_to_success(home, model, run_startup)
    assert len(commits(home.memory_root)) == 1 and RAW in committed_files(home.memory_root)


@check("p2.git.no-ignore-rules", title="a .gitignore in the root hides nothing from the "
       "workspace diff", rules="GIT-02", level="MUST", area="phase2")
def test_no_ignore_rules(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    home.memory_root.mkdir(parents=True)
    (home.memory_root / ".gitignore").write_text("*.md\nrollout_summaries/\n")
    capture = captured_run(home, model, run_startup)
    assert diff_status(capture.diff) == [f"- A {RAW}",
                                         f"- A {SUMMARIES}/{stem_of(home, thread)}"]
    assert RAW in committed_files(home.memory_root)


# -- the diff file ------------------------------------------------------------------------


def layout_ok(text: str) -> None:
    assert text.startswith("# Memory Workspace Diff\n\n"), "wrong title"
    head, _, rest = text.partition("\n## Status\n")
    assert rest, "no '## Status' section"
    assert len([line for line in head.splitlines()[1:] if line]) == 1, \
        "expected one explanation line between the title and the status list"
    status_part, _, diff_part = rest.partition("\n\n## Diff\n\n```diff\n")
    assert diff_part, "no '## Diff' section with a diff fence after the status list"
    assert all(re.fullmatch(r"- [AMD] \S.*", line) for line in status_part.splitlines()), \
        f"malformed status list:\n{status_part}"
    assert text.endswith("\n```\n"), "the diff fence is not closed at the end"


@check("p2.diff.layout", title="the diff file has the title, a status list and a fenced "
       "unified diff", rules="DIFF-01", level="MUST", area="phase2")
def test_layout(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home, raw="- marker-raw-line")
    text = captured_run(home, model, run_startup).diff
    layout_ok(text)
    assert "\n+- marker-raw-line\n" in text, "the added raw memory is not in the diff"
    assert f"\n+thread_id: {thread}\n" in text, "the added summary is not in the diff"


FORGET: dict[str, Any] = {
    "row-deleted": lambda home, tid: home.execute(
        home.memories_db, "DELETE FROM stage1_outputs WHERE thread_id = ?", (tid,)),
    "thread-polluted": lambda home, tid: home.execute(
        home.state_db, "UPDATE threads SET memory_mode = 'polluted' WHERE id = ?", (tid,)),
    "thread-disabled": lambda home, tid: home.execute(
        home.state_db, "UPDATE threads SET memory_mode = 'disabled' WHERE id = ?", (tid,)),
}


@check("p2.diff.forgetting", title="a forgotten thread shows as a deleted summary and a "
       "modified raw_memories.md", rules=("GIT-03", "DIFF-01", "FS-05"), level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", sorted(FORGET))
def test_forgetting(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    case: str) -> None:
    configure(home)
    seed_memory(home, age_s=2 * 3600)
    gone = seed_memory(home, age_s=3 * 3600, summary="- marker-forgotten-summary")
    succeed_once(home, model, run_startup)
    name = stem_of(home, gone)
    FORGET[case](home, gone)
    text = captured_run(home, model, run_startup).diff
    assert diff_status(text) == [f"- M {RAW}", f"- D {SUMMARIES}/{name}"]
    assert "\n-- marker-forgotten-summary\n" in text
    assert name not in summary_files(home)


@check("p2.diff.refreshed", title="a re-extracted thread shows its summary and raw_memories.md "
       "as modified", rules=("GIT-03", "DIFF-01"), level="MUST", area="phase2")
def test_refreshed(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home, raw="- old fact")
    succeed_once(home, model, run_startup)
    name = stem_of(home, thread)
    [row] = home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs")
    home.update_stage1_output(thread, raw_memory="- new fact",
                              rollout_summary="A newer summary.",
                              source_updated_at=row["source_updated_at"] + 60)
    text = captured_run(home, model, run_startup).diff
    assert diff_status(text) == [f"- M {RAW}", f"- M {SUMMARIES}/{name}"]
    assert "\n-- old fact\n" in text and "\n+- new fact\n" in text


@check("p2.diff.sorted", title="the status list is sorted by path", rules="GIT-03",
       level="MUST", area="phase2")
def test_sorted(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    for age in (2, 3, 4):
        seed_memory(home, age_s=age * 3600)
    succeed_once(home, model, run_startup)
    root = home.memory_root
    (root / "Zeta.md").write_text("z\n")
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\n")
    (root / "extensions" / "chronicle" / "resources").mkdir(parents=True)
    (root / "extensions" / "chronicle" / "instructions.md").write_text("How to read these.\n")
    home.execute(home.memories_db, "DELETE FROM stage1_outputs WHERE rowid IN "
                 "(SELECT rowid FROM stage1_outputs LIMIT 2)")
    paths = [line[4:] for line in diff_status(captured_run(home, model, run_startup).diff)]
    assert paths == sorted(paths, key=str.encode) and len(paths) == 6, paths
    assert paths[-1] == "skills/demo/SKILL.md", "an added file was not placed by its path"


@check("p2.diff.snapshot", title="the diff file of a forgetting run (snapshot of its status "
       "list and changed lines)", rules=("DIFF-01", "GIT-03"), level="MUST", area="phase2")
def test_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                  snapshot: SnapshotAssertion) -> None:
    configure(home)
    seed_memory(home, thread_id="0194f5a6-89ab-7cde-8123-456789abcdef", slug="kept",
                raw="- kept fact", summary="Kept summary.")
    gone = seed_memory(home, thread_id="019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b", slug="gone",
                       raw="- forgotten fact", summary="Forgotten summary.")
    succeed_once(home, model, run_startup)
    home.execute(home.memories_db, "DELETE FROM stage1_outputs WHERE thread_id = ?", (gone,))
    text = captured_run(home, model, run_startup).diff
    masker = Masker({str(home.path): "<home>"})
    body = text.split("```diff\n", 1)[1]
    changed = [masker.text(line) for line in body.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert {"status": diff_status(text), "changed": changed} == snapshot


@check("p2.diff.bounded", title="a huge diff is cut at 4 MiB with a marker; the status list "
       "is complete", rules="DIFF-02", level="SHOULD", area="phase2")
def test_bounded(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    big = "- " + "é" * (2 * 1024 * 1024 + 100)
    thread = seed_memory(home, raw=big)
    text = captured_run(home, model, run_startup).diff
    assert "\n[workspace diff truncated at 4194304 bytes]\n```\n" in text
    assert len(text.encode()) < 4 * 1024 * 1024 + 64 * 1024
    assert diff_status(text) == [f"- A {RAW}", f"- A {SUMMARIES}/{stem_of(home, thread)}"]
    assert "\ufffd" not in text, "the cut split a character"


@check("p2.diff.stale-file-removed", title="a leftover diff file is removed before the "
       "workspace is compared", rules=("DIFF-01", "P2-RUN-02"), level="MUST", area="phase2")
def test_stale_file_removed(home: CodexHome, model: MockModel,
                            run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    succeed_once(home, model, run_startup)
    (home.memory_root / DIFF_FILE).write_text("# left over by a crashed run\n")
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "the leftover diff file alone started an agent"
    assert not (home.memory_root / DIFF_FILE).exists()

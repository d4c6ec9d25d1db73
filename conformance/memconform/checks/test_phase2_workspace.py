"""GIT, DIFF: the memory root as a git workspace, its baseline commit, and the diff file the
consolidation agent reads first (captured when the agent's first request arrives)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from memconform.checks.consolidation import (
    DIFF_FILE,
    DONE,
    RAW,
    SUMMARIES,
    add_file,
    agent_finishes,
    agent_patches,
    configure,
    consolidations,
    expire_cooldown,
    git,
    global_job,
    inputs_listed,
    one_memory_run,
    seed_memory,
    summary_files,
)
from memconform.checks.stage1 import WALL_TOLERANCE_S, assert_now
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, http_error, message
from memconform.registry import check
from memconform.snapshots import Masker
from memconform.verdicts import fail, only

IDENTITY = "Codex <noreply@openai.com>"
SUBJECT = "Initialize Codex git baseline"
TRAILER = f"Co-authored-by: {IDENTITY}"


# -- reading the workspace: what the implementation left, as a fail when it left nothing --


def _git_or_none(root: Path, *args: str) -> str | None:
    try:
        return git(root, *args)
    except AssertionError:  # git refused: the implementation left no usable repository
        return None


def _problem(root: Path) -> str | None:
    """Why the memory root is not a git workspace with a commit, or None when it is one."""
    if not root.is_dir():
        return "the memory root does not exist"
    if not (root / ".git").exists():
        return "the memory root is not a git repository (no .git)"
    if _git_or_none(root, "rev-parse", "--verify", "-q", "HEAD^{commit}") is None:
        return "the memory root's git repository has no commit, or its metadata is unusable"
    return None


def _workspace(root: Path, when: str) -> Path:
    problem = _problem(root)
    if problem is not None:
        fail(f"{when}, {problem}")
    return root


def _commits(root: Path, when: str) -> list[str]:
    return git(_workspace(root, when), "rev-list", "--all").split()


def _committed(root: Path, when: str) -> list[str]:
    return sorted(git(_workspace(root, when), "ls-tree", "-r", "--name-only",
                      "HEAD").splitlines())


def _status(root: Path, when: str) -> str:
    return git(_workspace(root, when), "status", "--porcelain", "--untracked-files=all")


def _assert_done(home: CodexHome, what: str) -> None:
    row = global_job(home)
    if row is None:
        fail(f"{what} did not run: there is no memory_consolidate_global job row")
    assert row["status"] == "done", f"{what} did not leave the consolidation job done"


def _run_to_success(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    what: str = "the consolidation") -> None:
    """One startup whose consolidation (the agent finishing at once) must succeed."""
    agent_finishes(model)
    run_startup(home)
    _assert_done(home, what)


def _succeed_once(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    """A first consolidation that ends in success, then the cooldown moved out of the way."""
    _run_to_success(home, model, run_startup, "the first consolidation")
    expire_cooldown(home)
    model.reset()


class _Diff:
    """The diff file as it was when the first consolidation request arrived."""

    def __init__(self, home: CodexHome) -> None:
        self.home = home
        self.arrived = False
        self.raw: bytes | None = None

    def __call__(self) -> None:
        if self.arrived:
            return
        self.arrived = True
        path = self.home.memory_root / DIFF_FILE
        self.raw = path.read_bytes() if path.is_file() else None

    @property
    def text(self) -> str:
        if not self.arrived:
            fail("the consolidation agent never started: no consolidation request reached "
                 "the model, so there is no diff file to read")
        if self.raw is None:
            fail(f"{DIFF_FILE} was not in the memory root when the consolidation agent "
                 "started")
        try:
            return self.raw.decode("utf-8")
        except UnicodeDecodeError:
            fail(f"{DIFF_FILE} is not UTF-8 text")


def _no_probe_errors(model: MockModel) -> None:
    if model.probe_errors:
        fail("the memory root could not be read when the consolidation agent started ("
             f"{model.probe_errors[0]})")


def _captured_run(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> _Diff:
    """One startup whose agent finishes at once, with the diff file captured on arrival."""
    capture = _Diff(home)
    agent_finishes(model, message(DONE).probed(capture))
    run_startup(home)
    _no_probe_errors(model)
    return capture


def _diff_status(text: str) -> list[str]:
    """The `- X path` lines of a workspace diff file's status list."""
    if "## Status" not in text:
        fail(f"{DIFF_FILE} has no '## Status' section")
    section = text.split("## Status", 1)[1].split("## Diff", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def stem_of(home: CodexHome, thread_id: str) -> str:
    folder = home.memory_root / SUMMARIES
    names = [n for n in summary_files(home) if (folder / n).is_file() and thread_id in
             (folder / n).read_text(encoding="utf-8", errors="replace")]
    return only(names, f"file in {SUMMARIES}/ summarising thread {thread_id}")


@check("p2.git.first-baseline", title="the first consolidation commits the root as it was "
       "before the inputs were written, so every input shows as added", rules=("GIT-01",
                                                                                "GIT-03"),
       level="MUST", area="phase2")
def test_first_baseline(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    seen: dict[str, Any] = {}
    capture = _Diff(home)
    root = home.memory_root

    def probe() -> None:
        capture()
        if "problem" in seen:
            return
        seen["problem"] = _problem(root)
        if seen["problem"] is None:
            seen["commits"] = git(root, "rev-list", "--all").split()
            seen["files"] = sorted(git(root, "ls-tree", "-r", "--name-only",
                                       "HEAD").splitlines())

    agent_finishes(model, message(DONE).probed(probe))
    run_startup(home)
    _no_probe_errors(model)
    if "problem" not in seen:
        fail("the consolidation agent never started: no consolidation request reached the "
             "model, so there was no first baseline to inspect")
    if seen["problem"] is not None:
        fail(f"when the consolidation agent started, {seen['problem']}: the first baseline "
             "was not committed")
    assert len(seen["commits"]) == 1, \
        "when the consolidation agent started, the memory root did not hold exactly one " \
        "baseline commit"
    files: list[str] = seen["files"]
    assert RAW not in files, "the first baseline already holds raw_memories.md: it was " \
        "committed after the inputs were written"
    assert [f for f in files if f.startswith(f"{SUMMARIES}/")] == [], \
        "the first baseline already holds rollout summaries: it was committed after the " \
        "inputs were written"
    assert _diff_status(capture.text) == inputs_listed(home, [
        f"- A {RAW}", f"- A {SUMMARIES}/{stem_of(home, thread)}"]), \
        "the diff file of the first consolidation does not list raw_memories.md (layout v1) " \
        "and the thread's summary as added"


@check("p2.git.commit", title="the baseline is one commit \"Initialize Codex git baseline\" "
       "with the Codex co-author trailer, by Codex <noreply@openai.com> at UTC", rules="GIT-02",
       level="MUST", area="phase2")
def test_commit(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                clock: HarnessClock) -> None:
    one_memory_run(home, model, run_startup)
    root = home.memory_root
    assert len(_commits(root, "after the first consolidation")) == 1, \
        "the memory root does not hold exactly one commit after the first consolidation"
    fields = git(root, "log", "-1", "--format=%an <%ae>%n%cn <%ce>%n%at%n%ct%n%ai%n%B").split(
        "\n")
    author, committer, authored, committed, iso = fields[:5]
    message_lines = [line for line in fields[5:] if line]
    assert author == IDENTITY, "the baseline commit's author is not Codex <noreply@openai.com>"
    assert committer == IDENTITY, \
        "the baseline commit's committer is not Codex <noreply@openai.com>"
    assert iso[-5:] == "+0000", "the baseline commit's time is not in UTC (+0000)"
    assert message_lines == [SUBJECT, TRAILER], "the baseline commit's message is not the " \
        "subject \"Initialize Codex git baseline\" and the Codex co-author trailer"
    assert git(root, "log", "-1", "--format=%B").startswith(f"{SUBJECT}\n\n{TRAILER}"), \
        "the baseline commit's subject and co-author trailer are not separated by one blank " \
        "line"
    for what, value in (("author", int(authored)), ("committer", int(committed))):
        if clock.injected:
            assert value == clock.now, \
                f"the baseline commit's {what} time is not the injected now"
        else:
            assert abs(value - time.time()) < WALL_TOLERANCE_S, \
                f"the baseline commit's {what} time is not now (seconds from the wall clock)"


class _CommitTimes:
    """`<author time> <committer time>` of HEAD when the first consolidation request arrived
    (None: no commit then)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.arrived = False
        self.times: str | None = None

    def __call__(self) -> None:
        if self.arrived:
            return
        self.arrived = True
        found = _git_or_none(self.root, "log", "-1", "--format=%at %ct")
        self.times = found.strip() if found is not None else None


@check("p2.git.commit-floored-now", title="at now_ms .999 s the baseline commit, as the agent "
       "finds it and as reset after the success, is dated now rounded down to whole seconds",
       rules="GIT-02", level="SHOULD", area="phase2", needs=("clock.inject",))
def test_commit_floored_now(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                            clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    seen = _CommitTimes(home.memory_root)
    agent_finishes(model, message(DONE).probed(seen))
    run_startup(home)
    _no_probe_errors(model)
    if not seen.arrived:
        fail("the consolidation agent never started: no consolidation request reached the model")
    if seen.times is None:
        fail("the memory root had no baseline commit when the consolidation agent started")
    want = f"{clock.now} {clock.now}"
    assert seen.times == want, "the baseline commit the agent started from is not dated " \
        "now_ms rounded down to seconds (author and committer time; .999 s must not round up)"
    _assert_done(home, "the consolidation")
    root = _workspace(home.memory_root, "after the consolidation")
    assert git(root, "log", "-1", "--format=%at %ct").strip() == want, \
        "the baseline commit reset after the success is not dated now_ms rounded down to " \
        "seconds (author and committer time; .999 s must not round up)"


@check("p2.git.clean-after-success", title="after a success the tree is committed, clean, and "
       "the diff file is gone", rules=("GIT-04", "DIFF-01"), level="MUST", area="phase2")
def test_clean_after_success(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    capture = _captured_run(home, model, run_startup)
    assert capture.text is not None, "the diff file was not written for the agent"
    root = home.memory_root
    assert not (root / DIFF_FILE).exists(), \
        "the diff file is still in the memory root after the successful consolidation"
    when = "after the successful consolidation"
    assert _status(root, when) == "", \
        "the memory root has uncommitted changes after the successful consolidation"
    files = _committed(root, when)
    assert set(inputs_listed(home, [RAW])) <= set(files), \
        "raw_memories.md is not committed after the successful consolidation"
    assert f"{SUMMARIES}/{stem_of(home, thread)}" in files, \
        "the thread's rollout summary is not committed after the successful consolidation"
    assert DIFF_FILE not in files, "the diff file was committed with the agent's outputs"


@check("p2.git.history-reset", title="every success replaces the history with one fresh "
       "commit holding the agent's outputs", rules=("GIT-04", "AGENT-04"), level="MUST",
       area="phase2")
def test_history_reset(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    _succeed_once(home, model, run_startup)
    root = home.memory_root
    first = _commits(root, "after the first consolidation")
    seed_memory(home, age_s=3 * 3600)
    agent_patches(model, add_file("MEMORY.md", "# Memory\n- second run"))
    run_startup(home)
    _assert_done(home, "the second consolidation (the agent adding MEMORY.md)")
    when = "after the second consolidation"
    now = _commits(root, when)
    assert len(now) == 1, "the history was kept: the memory root holds more than one commit " \
        "after the second success"
    assert now != first, "the second success did not replace the baseline with a fresh commit"
    assert "MEMORY.md" in _committed(root, when), \
        "the agent's MEMORY.md is not committed after the second success"
    assert _status(root, when) == "", \
        "the memory root has uncommitted changes after the second success"


@check("p2.git.failure-stays-dirty", title="after a failed consolidation the synced inputs "
       "stay uncommitted and the diff file stays", rules=("GIT-04", "P2-RUN-05"),
       level="MUST", area="phase2")
def test_failure_stays_dirty(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    thread = one_memory_run(home, model, run_startup, http_error(500))
    if consolidations(model) == 0:
        fail("the consolidation agent never started, so there was no failed consolidation "
             "to leave the workspace dirty")
    root = home.memory_root
    assert (root / DIFF_FILE).is_file(), \
        "the diff file was removed after the failed consolidation"
    when = "after the failed consolidation"
    for synced in (*inputs_listed(home, [RAW]), f"{SUMMARIES}/{stem_of(home, thread)}"):
        assert synced not in _committed(root, when), \
            f"{synced} was committed after the failed consolidation"
        assert synced.split("/")[0] in _status(root, when), \
            f"{synced} does not show as uncommitted after the failed consolidation"


@check("p2.git.baseline-kept", title="a usable baseline is kept: a hand edit since the last "
       "success shows as modified", rules=("GIT-01", "GIT-03"), level="MUST", area="phase2")
def test_baseline_kept(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    agent_patches(model, add_file("MEMORY.md", "# Memory\n- old"))
    run_startup(home)
    if global_job(home) is None:
        fail("the first consolidation (the agent adding MEMORY.md) did not run: there is no "
             "memory_consolidate_global job row")
    expire_cooldown(home)
    model.reset()
    (home.memory_root / "MEMORY.md").write_text("# Memory\n- edited by hand\n")
    text = _captured_run(home, model, run_startup).text
    assert _diff_status(text) == ["- M MEMORY.md"], \
        "the diff file does not list the hand-edited MEMORY.md as the only change, modified"
    assert "-- old" in text, "the diff does not show MEMORY.md's committed line as removed"
    assert "+- edited by hand" in text, "the diff does not show the hand-edited line as added"


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
    thread = seed_memory(home)
    home.memory_root.mkdir(parents=True)
    spec = UNUSABLE[case]
    metadata = home.memory_root / ".git"
    if "" in spec:
        metadata.write_text(spec[""])
    else:
        metadata.mkdir()
        for name, text in spec.items():
            (metadata / name).write_text(text)
    _run_to_success(home, model, run_startup,
                    f"the consolidation over unusable git metadata ({case})")
    when = f"after the consolidation over unusable git metadata ({case})"
    assert len(_commits(home.memory_root, when)) == 1, \
        "the unusable git metadata was not replaced by one fresh baseline commit"
    synced = inputs_listed(home, [RAW, f"{SUMMARIES}/{stem_of(home, thread)}"])
    assert set(synced) <= set(_committed(home.memory_root, when)), \
        "the synced inputs are not committed after the consolidation over unusable git metadata"


@check("p2.git.no-ignore-rules", title="a .gitignore in the root hides nothing from the "
       "workspace diff", rules="GIT-02", level="MUST", area="phase2")
def test_no_ignore_rules(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home)
    home.memory_root.mkdir(parents=True)
    (home.memory_root / ".gitignore").write_text("*.md\nrollout_summaries/\n")
    capture = _captured_run(home, model, run_startup)
    synced = inputs_listed(home, [RAW, f"{SUMMARIES}/{stem_of(home, thread)}"])
    assert _diff_status(capture.text) == [f"- A {path}" for path in synced], \
        "with a .gitignore ignoring *.md and rollout_summaries/, the diff file does not list " \
        "raw_memories.md (layout v1) and the thread's summary as added"
    assert set(synced) <= set(_committed(home.memory_root, "after the consolidation")), \
        "the synced inputs are not committed: the .gitignore hid them from the workspace"


# -- the diff file ------------------------------------------------------------------------


def layout_ok(text: str) -> None:
    assert text.startswith("# Memory Workspace Diff\n\n"), \
        "the diff file does not start with the title '# Memory Workspace Diff' and a blank line"
    head, _, rest = text.partition("\n## Status\n")
    assert rest, "the diff file has no '## Status' section"
    assert len([line for line in head.splitlines()[1:] if line]) == 1, \
        "the diff file does not have exactly one explanation line between the title and the " \
        "status list"
    status_part, _, diff_part = rest.partition("\n\n## Diff\n\n```diff\n")
    assert diff_part, "the diff file has no '## Diff' section with a diff fence after the " \
        "status list"
    bad = [line for line in status_part.splitlines() if not re.fullmatch(r"- [AMD] \S.*", line)]
    assert bad == [], "the diff file's status list has lines that are not '- A|M|D path'"
    assert text.endswith("\n```\n"), "the diff file's diff fence is not closed at its end"


@check("p2.diff.layout", title="the diff file has the title, a status list and a fenced "
       "unified diff", rules="DIFF-01", level="MUST", area="phase2")
def test_layout(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home, raw="- marker-raw-line")
    text = _captured_run(home, model, run_startup).text
    layout_ok(text)
    if home.layout == "v1":  # layout v2 has no raw memories
        assert "\n+- marker-raw-line\n" in text, \
            "the diff does not show the added raw memory's line as added"
    assert f"\n+thread_id: {thread}\n" in text, \
        "the diff does not show the added summary's thread_id line as added"


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
    _succeed_once(home, model, run_startup)
    name = stem_of(home, gone)
    FORGET[case](home, gone)
    text = _captured_run(home, model, run_startup).text
    assert _diff_status(text) == inputs_listed(home, [f"- M {RAW}",
                                                      f"- D {SUMMARIES}/{name}"]), \
        "the diff file does not list the forgotten thread as its summary deleted and " \
        "raw_memories.md (layout v1) modified"
    assert "\n-- marker-forgotten-summary\n" in text, \
        "the diff does not show the forgotten summary's line as removed"
    assert name not in summary_files(home), \
        "the forgotten thread's summary file is still in rollout_summaries/"


@check("p2.diff.refreshed", title="a re-extracted thread shows its summary and raw_memories.md "
       "as modified", rules=("GIT-03", "DIFF-01"), level="MUST", area="phase2")
def test_refreshed(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = seed_memory(home, raw="- old fact")
    _succeed_once(home, model, run_startup)
    name = stem_of(home, thread)
    row = only(home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs"),
               "stage1_outputs row after the first consolidation")
    home.update_stage1_output(thread, raw_memory="- new fact",
                              rollout_summary="A newer summary.",
                              source_updated_at=row["source_updated_at"] + 60)
    text = _captured_run(home, model, run_startup).text
    assert _diff_status(text) == inputs_listed(home, [f"- M {RAW}",
                                                      f"- M {SUMMARIES}/{name}"]), \
        "the diff file does not list the re-extracted thread's summary and raw_memories.md " \
        "(layout v1) as modified"
    assert "\n+A newer summary.\n" in text, "the diff does not show the new summary as added"
    if home.layout == "v1":  # layout v2 has no raw memories
        assert "\n-- old fact\n" in text, "the diff does not show the old raw memory as removed"
        assert "\n+- new fact\n" in text, "the diff does not show the new raw memory as added"


@check("p2.diff.sorted", title="the status list is sorted by path", rules="GIT-03",
       level="MUST", area="phase2")
def test_sorted(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    for age in (2, 3, 4):
        seed_memory(home, age_s=age * 3600)
    _succeed_once(home, model, run_startup)
    root = home.memory_root
    (root / "Zeta.md").write_text("z\n")
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\n")
    (root / "extensions" / "chronicle" / "resources").mkdir(parents=True)
    (root / "extensions" / "chronicle" / "instructions.md").write_text("How to read these.\n")
    home.execute(home.memories_db, "DELETE FROM stage1_outputs WHERE rowid IN "
                 "(SELECT rowid FROM stage1_outputs LIMIT 2)")
    paths = [line[4:] for line in _diff_status(_captured_run(home, model, run_startup).text)]
    assert len(paths) == len(inputs_listed(home, [RAW])) + 5, "the status list does not hold " \
        "the changes (raw_memories.md in layout v1, two deleted summaries, three added files)"
    assert paths == sorted(paths, key=str.encode), \
        "the diff file's status list is not sorted by path (byte order)"
    assert paths[-1] == "skills/demo/SKILL.md", "an added file was not placed by its path"


@check("p2.diff.sorted-bytes", title="the status list is sorted by the bytes of the whole "
       "path, not folder by folder or by letter", rules="GIT-03", level="MUST", area="phase2")
def test_sorted_bytes(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    _succeed_once(home, model, run_startup)
    root = home.memory_root
    # '-' (0x2D) sorts before '/' (0x2F), so a-x.md precedes the folder a/; 'é' (C3 A9) sorts
    # after 'z' (0x7A)
    for name in ("é.md", "z.md", "a/b.md", "a-x.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n", encoding="utf-8")
    lines = _diff_status(_captured_run(home, model, run_startup).text)
    assert lines == ["- A a-x.md", "- A a/b.md", "- A z.md", "- A é.md"], \
        "the diff file's status list does not give the four added files in the byte order " \
        "of their whole paths (a-x.md, a/b.md, z.md, é.md)"


@check("p2.diff.sorted-astral", title="the status list puts a 4-byte UTF-8 name after a 3-byte "
       "one (byte order, not UTF-16 order)", rules="GIT-03", level="MUST", area="phase2")
def test_sorted_astral(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    _succeed_once(home, model, run_startup)
    root = home.memory_root
    # U+1F600 (F0 9F 98 80) sorts after U+FF5A (EF BD 9A) by bytes and code points, but its
    # UTF-16 surrogate pair (D83D DE00) sorts before FF5A
    for name in ("\U0001f600.md", "\uff5a.md"):
        (root / name).write_text(f"{name}\n", encoding="utf-8")
    lines = _diff_status(_captured_run(home, model, run_startup).text)
    assert lines == ["- A \uff5a.md", "- A \U0001f600.md"], \
        "the diff file's status list does not give the 3-byte name U+FF5A before the 4-byte " \
        "name U+1F600 (UTF-8 byte order, where UTF-16 order is the reverse)"


@check("p2.diff.snapshot", title="the diff file of a forgetting run (snapshot of its status "
       "list and changed lines)", rules=("DIFF-01", "GIT-03"), level="MUST", area="phase2",
       layout="v1")
def test_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                  snapshot: SnapshotAssertion) -> None:
    _forgetting_diff(home, model, run_startup, snapshot)


@check("p2.v2.diff-snapshot", title="layout v2: the diff file of a forgetting run (snapshot of "
       "its status list and changed lines)", rules=("DIFF-01", "GIT-03", "P2-V2-01"),
       level="MUST", area="phase2", codex_since="0.155.0", layout="v2")
def test_v2_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     snapshot: SnapshotAssertion) -> None:
    _forgetting_diff(home, model, run_startup, snapshot)


def _forgetting_diff(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     snapshot: SnapshotAssertion) -> None:
    """Two memories consolidated, one of them deleted, a second run: its diff file's status
    list and changed lines against the snapshot."""
    configure(home)
    seed_memory(home, thread_id="0194f5a6-89ab-7cde-8123-456789abcdef", slug="kept",
                raw="- kept fact", summary="Kept summary.")
    gone = seed_memory(home, thread_id="019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b", slug="gone",
                       raw="- forgotten fact", summary="Forgotten summary.")
    _succeed_once(home, model, run_startup)
    home.execute(home.memories_db, "DELETE FROM stage1_outputs WHERE thread_id = ?", (gone,))
    text = _captured_run(home, model, run_startup).text
    masker = Masker({str(home.path): "<home>"})
    if "```diff\n" not in text:
        fail(f"{DIFF_FILE} has no ```diff fence")
    body = text.split("```diff\n", 1)[1]
    changed = [masker.text(line) for line in body.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    seen = {"status": _diff_status(text), "changed": changed}
    matches = seen == snapshot  # outside the assert: a failed snapshot is reported as a fail
    if not matches:
        fail("the diff file of the forgetting run differs from the recorded one (its status "
             "list and changed lines)", actual=seen)


@check("p2.diff.bounded", title="a huge diff is cut at 4 MiB with a marker; the status list "
       "is complete", rules="DIFF-02", level="SHOULD", area="phase2")
def test_bounded(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    big = "- " + "é" * (2 * 1024 * 1024 + 100)  # a summary file of over 4 MiB, in either layout
    thread = seed_memory(home, summary=big)
    text = _captured_run(home, model, run_startup).text
    assert "\n[workspace diff truncated at 4194304 bytes]\n```\n" in text, \
        "the huge diff was not cut at 4 MiB with the truncation marker before the closing fence"
    assert len(text.encode()) < 4 * 1024 * 1024 + 64 * 1024, \
        "the diff file is larger than its 4 MiB diff plus the status list"
    assert _diff_status(text) == inputs_listed(
        home, [f"- A {RAW}", f"- A {SUMMARIES}/{stem_of(home, thread)}"]), \
        "the cut diff file's status list does not list the added inputs (raw_memories.md in " \
        "layout v1, the summary)"
    assert "\ufffd" not in text, "the cut split a UTF-8 character"


DIFF_LIMIT = 4 * 1024 * 1024
CUT_MARKER = f"\n[workspace diff truncated at {DIFF_LIMIT} bytes]\n".encode()
EURO = "€".encode()  # three bytes: E2 82 AC
FENCE = b"\n```diff\n"


def _fenced_diff(raw: bytes) -> bytes:
    """The bytes between the diff file's opening ```diff line and its closing fence."""
    start = raw.find(FENCE)
    if start < 0:
        fail(f"{DIFF_FILE} has no ```diff fence")
    if not raw.endswith(b"\n```\n"):
        fail(f"{DIFF_FILE} does not end with its closing fence")
    return raw[start + len(FENCE):-len(b"```\n")]


def _captured_bytes(capture: _Diff) -> bytes:
    """The captured diff file's bytes (`text` fails when there was none or it is not UTF-8,
    so a cut through a character is a fail)."""
    return capture.text.encode("utf-8")


SMALL = "- " + "€" * 10  # the calibration memory: one short line


def _calibrated(home: CodexHome, model: MockModel, run_startup: StartupRunner
                ) -> tuple[str, bytes]:
    """A first consolidation of a one-line memory: its thread and its (uncut) unified diff,
    which the next run repeats with only that line grown."""
    configure(home)
    thread = seed_memory(home, raw=SMALL)
    body = _fenced_diff(_captured_bytes(_captured_run(home, model, run_startup)))
    if CUT_MARKER in body or body.count(f"\n+{SMALL}\n".encode()) != 1:
        fail("the calibration diff (a one-line memory of 32 bytes) is not an uncut diff "
             "showing the memory's line once")
    _assert_done(home, "the calibration consolidation")
    return thread, body


def _grown(home: CodexHome, model: MockModel, run_startup: StartupRunner, thread: str,
           raw: str) -> bytes:
    """The unified diff of a fresh root (same files and headers) whose memory is `raw`."""
    shutil.rmtree(home.memory_root)
    expire_cooldown(home)
    model.reset()
    home.update_stage1_output(thread, raw_memory=raw)
    return _fenced_diff(_captured_bytes(_captured_run(home, model, run_startup)))


def _exactly_the_bound(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread, small = _calibrated(home, model, run_startup)
    grow = DIFF_LIMIT - len(small)
    big = SMALL + "€" * (grow // len(EURO)) + "a" * (grow % len(EURO))
    body = _grown(home, model, run_startup, thread, big)
    if CUT_MARKER in body:
        fail(f"a unified diff of exactly {DIFF_LIMIT} bytes was cut (only a diff over it is)")
    if len(body) != DIFF_LIMIT or body.count(f"\n+{big}\n".encode()) != 1:
        fail(f"the diff of the memory grown by {grow} bytes is not the calibration diff with "
             "that line grown, uncut", expected=DIFF_LIMIT, actual=len(body))


def _cut_into_a_character(into: int, char: str = "€"
                          ) -> Callable[[CodexHome, MockModel, StartupRunner], None]:
    """The bound falls `into` bytes inside a multi-byte `char` of a 4.2 MB line."""
    data = char.encode()

    def run(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
        thread, small = _calibrated(home, model, run_startup)
        start = small.find(EURO)  # where the memory's characters start in the diff
        pad = (DIFF_LIMIT - start - into) % len(data)  # ASCII that moves them into place
        body = _grown(home, model, run_startup, thread,
                      "- " + "a" * pad + char * (4_200_000 // len(data)))
        if not body.endswith(CUT_MARKER):
            fail("the diff of a 4.2 MB memory was not cut with the truncation marker right "
                 "before the closing fence")
        kept = body[:-len(CUT_MARKER)]
        if not kept.endswith(b"\n"):
            fail("the cut diff is not ended with a newline before the marker")
        cut = kept[:-1]
        first = start + pad
        if cut[:first].count(data) or not cut[:first].endswith(b"\n+- " + b"a" * pad):
            fail("the cut diff does not keep the start of the memory's added line "
                 "('+- ' and its ASCII padding) where the calibration diff had it")
        # the longest prefix within the bound ending on a character boundary: `into` bytes
        # short of it
        want = DIFF_LIMIT - into
        if len(cut) != want or cut[first:] != data * ((len(cut) - first) // len(data)):
            fail(f"the diff was not cut at the last UTF-8 character boundary within "
                 f"{DIFF_LIMIT} bytes (the bytes kept before the added newline)",
                 expected=want, actual=len(cut))

    return run


FOUR_BYTES = "\U0001f600"  # 😀: F0 9F 98 80


BOUNDED = {"exactly-the-bound": _exactly_the_bound,
           "cut-one-byte-into-a-character": _cut_into_a_character(1),
           "cut-two-bytes-into-a-character": _cut_into_a_character(2),
           "cut-one-byte-into-a-four-byte-character": _cut_into_a_character(1, FOUR_BYTES),
           "cut-three-bytes-into-a-four-byte-character": _cut_into_a_character(3, FOUR_BYTES)}


@check("p2.diff.bounded-exact", title="a diff over 4 MiB keeps the longest whole-character "
       "prefix within 4 194 304 bytes; a diff of exactly that size is not cut",
       rules="DIFF-02", level="SHOULD", area="phase2", layout="v1")
@pytest.mark.parametrize("case", sorted(BOUNDED))
def test_bounded_exact(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       case: str) -> None:
    BOUNDED[case](home, model, run_startup)


@check("p2.diff.stale-file-removed", title="a leftover diff file is removed before the "
       "workspace is compared", rules=("DIFF-01", "P2-RUN-02"), level="MUST", area="phase2")
def test_stale_file_removed(home: CodexHome, model: MockModel,
                            run_startup: StartupRunner, clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    _succeed_once(home, model, run_startup)
    (home.memory_root / DIFF_FILE).write_text("# left over by a crashed run\n")
    agent_finishes(model)
    run_startup(home)
    assert consolidations(model) == 0, "the leftover diff file alone started an agent"
    assert not (home.memory_root / DIFF_FILE).exists(), \
        "the leftover diff file is still in the memory root after the next startup"
    # control: the startup did compare the workspace, and found it unchanged
    _assert_done(home, "the startup after the leftover diff file")
    row = global_job(home)
    assert row is not None
    assert_now(row["finished_at"], clock, "finished_at of the no-change success after the "
               "leftover diff file")

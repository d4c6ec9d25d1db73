"""The memory root as a git workspace: baseline, diff against it, the diff file, and the reset
after a successful consolidation (GIT-01..GIT-05, DIFF-01, DIFF-02). Uses the `git` executable,
isolated from the user's git configuration."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memref.files import write_atomic

DIFF_FILE = "phase2_workspace_diff.md"
NAME, EMAIL = "Codex", "noreply@openai.com"
IDENTITY = f"{NAME} <{EMAIL}>"
MESSAGE = "Initialize Codex git baseline"
TRAILER = f"Co-authored-by: {IDENTITY}"
MAX_DIFF_BYTES = 4 * 1024 * 1024
GIT_TIMEOUT_S = 60
SETTINGS = ("core.quotepath=false", "core.autocrlf=false", "core.hooksPath=/dev/null",
            "core.excludesFile=/dev/null", "core.fileMode=true", "core.symlinks=true",
            "commit.gpgsign=false", "init.defaultBranch=main", "diff.renames=false",
            "maintenance.auto=false")


class WorkspaceError(RuntimeError):
    """A git operation on the memory root failed; the message carries git's own words."""


@dataclass(frozen=True)
class Diff:
    changes: list[tuple[str, str]]  # (A|M|D, slash-separated path), sorted by path
    text: str

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)


def _git(root: Path, *args: str, now: int | None = None, index: Path | None = None,
         stdin: bytes | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_DIR": str(root / ".git"), "GIT_WORK_TREE": str(root),
           "GIT_AUTHOR_NAME": NAME, "GIT_AUTHOR_EMAIL": EMAIL,
           "GIT_COMMITTER_NAME": NAME, "GIT_COMMITTER_EMAIL": EMAIL}
    if now is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{now} +0000"
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    command = ["git"] + [part for s in SETTINGS for part in ("-c", s)] + list(args)
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, input=stdin,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkspaceError(f"git {args[0]} in {root}: {exc}") from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise WorkspaceError(f"git {args[0]} in {root} exited {done.returncode}: {detail}")
    return done.stdout.decode("utf-8", "replace")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


_skeleton: list[tuple[str, bytes | None]] = []  # `.git` as git init makes it: (path, bytes)


def _init(root: Path) -> None:
    """`git init` of the root, one git process fewer per baseline: git makes a `.git` once per
    process in a scratch folder (no template, so no sample hooks); its folders and files
    (path, then None or the bytes) are kept in memory and written into each root."""
    if not _skeleton:
        with tempfile.TemporaryDirectory(prefix="memref-git-init-") as scratch:
            _git(Path(scratch), "init", "-q", "--template=")
            made = Path(scratch) / ".git"
            _skeleton[:] = [(path.relative_to(made).as_posix(),
                             None if path.is_dir() else path.read_bytes())
                            for path in sorted(made.rglob("*"))]
    target = root / ".git"
    target.mkdir()
    for rel, data in _skeleton:
        if data is None:
            (target / rel).mkdir()
        else:
            (target / rel).write_bytes(data)


def _commit_baseline(root: Path, now: int) -> None:
    _remove(root / ".git")
    _init(root)
    _git(root, "add", "--all", "--force")
    # GIT-01: the message exactly, without the final newline `-m` would add
    _git(root, "commit", "-q", "--allow-empty", "--no-verify", "--cleanup=verbatim", "-F", "-",
         now=now, stdin=f"{MESSAGE}\n\n{TRAILER}".encode())


def _usable(root: Path) -> bool:
    if not (root / ".git").is_dir() or (root / ".git").is_symlink():
        return False
    try:
        _git(root, "rev-parse", "--verify", "-q", "HEAD^{tree}")
    except WorkspaceError:
        return False
    return True


def prepare(root: Path, now: int) -> None:
    """Create the root, drop a stale diff file, and keep a usable baseline or commit the
    current content as a fresh one."""
    root.mkdir(parents=True, exist_ok=True)
    (root / DIFF_FILE).unlink(missing_ok=True)
    if not _usable(root):
        _commit_baseline(root, now)


def diff(root: Path) -> Diff:
    """Working files against the baseline commit, computed in a scratch index. One `git diff`
    gives both parts: NUL-terminated raw records (`:modes ids STATUS`, then the path), a NUL,
    then the patch."""
    (root / DIFF_FILE).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="memref-index-") as scratch:
        index = Path(scratch) / "index"
        _git(root, "add", "--all", "--force", index=index)
        out = _git(root, "diff", "--cached", "--no-renames", "--raw", "-z", "-p", "HEAD",
                   index=index)
    changes, at = [], 0
    while out.startswith(":", at):
        head_end = out.index("\0", at)
        path_end = out.index("\0", head_end + 1)
        status = out[head_end - 1]
        # git's T (type change, e.g. file to symlink) is a modification here
        changes.append((status if status in ("A", "D") else "M", out[head_end + 1:path_end]))
        at = path_end + 1
    if out.startswith("\0", at):
        at += 1
    changes.sort(key=lambda change: change[1].encode("utf-8"))
    return Diff(changes, _plain_headers(out[at:]))


_INDEX_LINE = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+(?: [0-7]+)?\n", re.M)
_HUNK_CONTEXT = re.compile(r"^(@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@).*$", re.M)


def _plain_headers(text: str) -> str:
    """git's diff without its `index` lines and the text after a hunk header (DIFF-01): a
    content line starts with a space, `+`, `-` or `\\`, so only header lines match."""
    return _HUNK_CONTEXT.sub(r"\1", _INDEX_LINE.sub("", text))


def _cut(text: str, limit: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding fits in `limit` bytes."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def render_diff_file(workspace_diff: Diff) -> str:
    """The diff file: the status list, then the diff; an unchanged workspace (P2-RUN-09) has
    the status `- none` and no diff section."""
    lines = ["# Memory Workspace Diff", "",
             "Written before this consolidation; read it first and leave it unchanged.", "",
             "## Status"]
    if not workspace_diff.has_changes:
        return "\n".join([*lines, "- none"]) + "\n"
    lines += [f"- {status} {path}" for status, path in workspace_diff.changes]
    body = workspace_diff.text
    if len(body.encode("utf-8")) > MAX_DIFF_BYTES:
        body = _cut(body, MAX_DIFF_BYTES)
        body = body if body.endswith("\n") else body + "\n"
        body += f"\n[workspace diff truncated at {MAX_DIFF_BYTES} bytes]\n"
    elif not body.endswith("\n"):
        body += "\n"
    return "\n".join([*lines, "", "## Diff", "", "```diff"]) + "\n" + body + "```\n"


def write_diff_file(root: Path, workspace_diff: Diff) -> None:
    write_atomic(root / DIFF_FILE, render_diff_file(workspace_diff))


def reset(root: Path, now: int) -> None:
    """Replace the history with one commit of the current tree (the diff file removed)."""
    (root / DIFF_FILE).unlink(missing_ok=True)
    _commit_baseline(root, now)

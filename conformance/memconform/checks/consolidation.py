"""Helpers shared by the Phase-2 checks (not collected: no `test_` prefix)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, Reply, custom_tool_call, has_tool_output, message
from memconform.verdicts import produced

DAY_S = 86_400
GLOBAL = "memory_consolidate_global"
COOLDOWN_S = 21_600
DIFF_FILE = "phase2_workspace_diff.md"
RAW = "raw_memories.md"
THREAD_LINE = re.compile(r"^thread_id: (\S+)$", re.MULTILINE)
SUMMARIES = "rollout_summaries"
EMPTY_RAW = "# Raw Memories\n\nNo raw memories yet.\n"
DONE = "Memory is up to date."
SECTION = re.compile(r"^## Thread `([^`]*)`$", re.M)
GIT_TIMEOUT_S = 30


def configure(home: CodexHome, memories: dict[str, Any] | None = None,
              top: dict[str, Any] | None = None) -> None:
    """Memories on, the consolidation job free to claim (no row yet)."""
    home.write_config(memories={"min_rollout_idle_hours": 1, **(memories or {})}, top=top)


def seed_memory(home: CodexHome, *, age_s: int = 2 * 3600, thread_id: str | None = None,
                raw: str | None = None, summary: str | None = None, slug: str | None = "topic",
                memory_mode: str = "enabled", git_branch: str | None = None,
                **columns: Any) -> str:
    """A thread and its stage-1 output, already up to date (Phase 1 leaves it alone);
    `columns` go to the `stage1_outputs` row (usage_count, last_usage, …)."""
    thread = home.add_thread(updated_ago_ms=age_s * 1000, thread_id=thread_id,
                             memory_mode=memory_mode, git_branch=git_branch)
    home.add_stage1_output(
        thread.id, source_updated_at=thread.updated_at_ms // 1000,
        raw_memory=f"- memory of {thread.id}" if raw is None else raw,
        rollout_summary=f"Summary of {thread.id}." if summary is None else summary,
        rollout_slug=slug, **columns)
    return thread.id


def agent_finishes(model: MockModel, reply: Reply | None = None) -> None:
    """The consolidation agent answers at once, without a tool call."""
    model.on("consolidation", reply or message(DONE))


def one_memory_run(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   reply: Reply | None = None) -> str:
    """Configure, seed one memory, script the agent's answer, run one startup; the thread."""
    configure(home)
    thread = seed_memory(home)
    agent_finishes(model, reply)
    run_startup(home)
    return thread


def run_to_success(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    """One startup whose consolidation (the agent finishing at once) must succeed."""
    agent_finishes(model)
    run_startup(home)
    job = global_job(home)
    assert job is not None and job["status"] == "done", f"consolidation did not finish: {job}"


def agent_patches(model: MockModel, patch: str, *, first: Reply | None = None,
                  then: Callable[[], None] | None = None) -> None:
    """The agent sends one `apply_patch` call, then finishes once it sees the tool output
    (`then` probes the files at that moment)."""
    finish = message(DONE)
    model.on("consolidation", finish.probed(then) if then else finish, has_tool_output=True)
    model.on("consolidation", first or custom_tool_call("apply_patch", patch, "call_patch"),
             has_tool_output=False)


def add_file(path: str, text: str) -> str:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def global_job(home: CodexHome) -> dict[str, Any] | None:
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = ? AND job_key = "
                      "'global'", (GLOBAL,))
    return rows[0] if rows else None


def expire_cooldown(home: CodexHome) -> None:
    """Move the last consolidation back past the six-hour cooldown (the clock stays put)."""
    changed = home.execute(home.memories_db, "UPDATE jobs SET finished_at = finished_at - ?"
                           " WHERE kind = ? AND job_key = 'global'", (COOLDOWN_S + 1, GLOBAL))
    assert changed == 1, "no consolidation job row to move back"


def consolidations(model: MockModel) -> int:
    """How many agent conversations were started (requests carrying no tool output yet)."""
    return sum(1 for r in model.of_kind("consolidation") if not has_tool_output(r.body))


def marks(home: CodexHome) -> dict[str, tuple[int, int | None]]:
    return {r["thread_id"]: (r["selected_for_phase2"], r["selected_for_phase2_source_updated_at"])
            for r in home.query(home.memories_db, "SELECT * FROM stage1_outputs")}


def inputs_listed(home: CodexHome, entries: list[str]) -> list[str]:
    """`entries` (paths or diff status lines) without raw_memories.md's in layout v2, which
    has no such file (P2-V2-01)."""
    return [e for e in entries if not e.endswith(RAW)] if home.layout == "v2" else entries


def raw_threads(home: CodexHome) -> list[str]:
    """The thread ids of `raw_memories.md`'s sections, in file order; in layout v2, which has
    no such file, those of the summary files' `thread_id:` lines, sorted."""
    if home.layout == "v2":
        folder = home.memory_root / SUMMARIES
        return sorted((m for name in summary_files(home) for m in THREAD_LINE.findall(
            (folder / name).read_text(encoding="utf-8"))), key=str.encode)
    return SECTION.findall(produced(home.memory_root / RAW, RAW))


def summary_files(home: CodexHome) -> list[str]:
    folder = home.memory_root / SUMMARIES
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def git(root: Path, *args: str) -> str:
    """A read-only git query on the memory root, isolated from any user configuration."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CEILING_DIRECTORIES": str(root.parent)}  # never an enclosing repository
    done = subprocess.run(["git", "-C", str(root), "-c", "core.quotepath=false", *args],
                          env=env, capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}"
    return done.stdout.decode("utf-8", "replace")


def commits(root: Path) -> list[str]:
    return git(root, "rev-list", "--all").split()


def committed_files(root: Path) -> list[str]:
    return sorted(git(root, "ls-tree", "-r", "--name-only", "HEAD").splitlines())


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def diff_status(text: str) -> list[str]:
    """The `- X path` lines of a workspace diff file's status list."""
    section = text.split("## Status", 1)[1].split("## Diff", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


class Capture:
    """The diff file as it was when the first consolidation request arrived."""

    def __init__(self, home: CodexHome) -> None:
        self.home = home
        self.arrived = False
        self.diff_text: str | None = None

    def __call__(self) -> None:
        if self.arrived:
            return
        self.arrived = True
        path = self.home.memory_root / DIFF_FILE
        self.diff_text = path.read_text(encoding="utf-8") if path.is_file() else None

    @property
    def diff(self) -> str:
        assert self.arrived, "no consolidation request arrived"
        assert self.diff_text is not None, f"{DIFF_FILE} was not on disk when the agent started"
        return self.diff_text


def captured_run(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> Capture:
    """One startup whose agent finishes at once, with the diff file captured on arrival."""
    capture = Capture(home)
    agent_finishes(model, message(DONE).probed(capture))
    run_startup(home)
    assert not model.probe_errors, model.probe_errors
    return capture


def succeed_once(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    """A first consolidation that ends in success, then the cooldown moved out of the way."""
    run_to_success(home, model, run_startup)
    expire_cooldown(home)
    model.reset()

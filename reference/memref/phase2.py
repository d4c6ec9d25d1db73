"""Phase 2: claim the consolidation job, materialise the selection into the memory root, and
run the consolidation agent only when the git workspace differs from its baseline
(P2-RUN-01..P2-RUN-06). Every failure is recorded under a named `last_error`."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from memref import jobs, store, workspace
from memref.agent import AgentError, AgentRun, LostOwnership, run_agent
from memref.config import CodexConfig
from memref.extensions import prune_resources
from memref.materialize import sync_inputs
from memref.prompts import consolidation_prompt, consolidation_prompt_v2
from memref.runtime import Runtime
from memref.selection import Selected, select

log = logging.getLogger(__name__)


class Failed(Exception):
    """A step failed; `reason` is the `last_error` label."""

    def __init__(self, reason: str, detail: object) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def completion_watermark(claimed: int, selected: list[Selected]) -> int:
    return max([claimed] + [memory.source_updated_at for memory in selected])


def still_owned(con: sqlite3.Connection, token: str, rt: Runtime) -> bool:
    """Extend the lease; false when another worker holds the job now (P2-RUN-04)."""
    return jobs.heartbeat_global(con, token, now=rt.elapsed_now())


def _load(home: Path, memories: sqlite3.Connection, config: CodexConfig, now: int
          ) -> list[Selected]:
    state = store.open_state_db(home)
    if state is None:
        raise store.StoreError("the state DB disappeared")
    try:
        return select(memories, state, limit=config.memories.max_raw_memories_for_consolidation,
                      max_unused_days=config.memories.max_unused_days, now=now)
    finally:
        state.close()


SUMMARY_HEADINGS_V2 = ("## User Profile", "## User preferences", "## General Tips",
                      "## What's in Memory")
SUMMARY_BYTES_BELOW_V2 = 10_000  # P2-V2-02: a valid summary is shorter than this
SERVICE_TIERS = frozenset({"flex", "priority"})  # AGENT-05: others are not sent


def needs_agent(changes: workspace.Diff, root: Path, config: CodexConfig) -> bool:
    """A changed workspace needs the agent (P2-RUN-02); where the artifacts are checked, so
    does an unchanged one whose artifacts are not valid (P2-RUN-09)."""
    return changes.has_changes or (config.release.validates_artifacts and
                                   artifacts_problem(root, config.layout.name) is not None)


def artifacts_problem(root: Path, layout: str = "v1") -> str | None:
    """What is wrong with the files the agent left (P2-RUN-08; layout v2: P2-V2-02); None
    when they are valid."""
    if layout == "v1" and not (root / "MEMORY.md").is_file():
        return "MEMORY.md is missing"
    try:
        data = (root / "memory_summary.md").read_bytes()
    except OSError as exc:
        return f"memory_summary.md cannot be read: {exc.strerror}"
    first = data.split(b"\n", 1)[0]
    if layout == "v1":
        return None if first == b"v1" else "memory_summary.md does not start with the line v1"
    if first.removesuffix(b"\r") != b"v1":
        return "memory_summary.md does not start with the line v1"
    if len(data) >= SUMMARY_BYTES_BELOW_V2:
        return f"memory_summary.md has {len(data)} bytes; it must have fewer than 10,000"
    present = {line.strip() for line in data.decode("utf-8", "replace").splitlines()}
    missing = [heading for heading in SUMMARY_HEADINGS_V2 if heading not in present]
    if missing:
        return f"memory_summary.md has no line {missing[0]!r}"
    return None


def run_phase2(home: Path, root: Path, config: CodexConfig, session_thread: str, rt: Runtime,
               env: dict[str, str]) -> str:
    """One consolidation attempt; returns its status label."""
    con = store.memories_db(home, config)
    try:
        token = rt.uuid4()
        try:
            outcome, claimed_watermark = jobs.claim_global(con, worker=session_thread,
                                                           token=token, now=rt.now)
        except sqlite3.Error as exc:
            log.warning("Phase 2 claim failed: %s", exc)
            return "failed_claim"
        if outcome is not jobs.GlobalClaim.CLAIMED:
            return str(outcome.value)
        try:
            return _run_claimed(home, root, config, rt, env, con, token, claimed_watermark)
        except Failed as exc:
            log.warning("Phase 2 failed: %s", exc)
            jobs.global_failed(con, token, exc.reason, now=rt.now, or_unowned=True)
            return exc.reason
    finally:
        con.close()


def _run_claimed(home: Path, root: Path, config: CodexConfig, rt: Runtime,
                 env: dict[str, str], con: sqlite3.Connection, token: str,
                 claimed_watermark: int) -> str:
    try:
        workspace.prepare(root, rt.now)
    except (OSError, workspace.WorkspaceError) as exc:
        raise Failed("failed_prepare_workspace", exc) from exc
    try:
        selected = _load(home, con, config, rt.now)
    except (sqlite3.Error, store.StoreError) as exc:
        raise Failed("failed_load_stage1_outputs", exc) from exc
    try:
        sync_inputs(root, selected, raw_memories=config.layout.name == "v1")
        prune_resources(root, rt.now)
    except OSError as exc:
        raise Failed("failed_sync_workspace_inputs", exc) from exc
    try:
        changes = workspace.diff(root)
    except (OSError, workspace.WorkspaceError) as exc:
        raise Failed("failed_workspace_status", exc) from exc
    watermark = completion_watermark(claimed_watermark, selected)
    keys = [memory.key for memory in selected]
    if not needs_agent(changes, root, config):
        jobs.global_succeeded(con, token, watermark, keys, now=rt.now)
        return "succeeded_no_workspace_changes"
    try:
        workspace.write_diff_file(root, changes)
    except OSError as exc:
        raise Failed("failed_workspace_diff_file", exc) from exc
    provider = config.provider
    if provider is None:
        raise Failed("failed_spawn_agent", "no model_provider configured")
    prompt = consolidation_prompt_v2(str(root), workspace.DIFF_FILE) \
        if config.layout.name == "v2" else \
        consolidation_prompt(str(root), workspace.DIFF_FILE, (root / "extensions").is_dir())
    tier = config.memories.consolidation_service_tier
    run = AgentRun(model=config.consolidation_model, thread_id=rt.uuid7(), prompt=prompt,
                   service_tier=tier if tier in SERVICE_TIERS else None)
    try:
        run_agent(provider, root, run, env, still_owned=lambda: still_owned(con, token, rt))
    except LostOwnership as exc:
        log.warning("Phase 2 stopped: %s", exc)
        return "lost_ownership"
    except (AgentError, sqlite3.Error) as exc:
        raise Failed("failed_agent", exc) from exc
    if config.release.validates_artifacts:
        problem = artifacts_problem(root, config.layout.name)
        if problem is not None:
            raise Failed("failed_invalid_artifacts", problem)
    try:
        owned = still_owned(con, token, rt)
    except sqlite3.Error as exc:
        raise Failed("failed_confirm_ownership", exc) from exc
    if not owned:
        log.warning("Phase 2 lost ownership before the baseline reset; nothing recorded")
        return "lost_ownership"
    try:
        workspace.reset(root, rt.now)
    except (OSError, workspace.WorkspaceError) as exc:
        raise Failed("failed_workspace_commit", exc) from exc
    jobs.global_succeeded(con, token, watermark, keys, now=rt.now)
    return "succeeded"

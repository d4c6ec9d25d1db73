"""One startup of the memories pipeline on a Codex home (START-01..START-03): guards, then for
each layout the config selects (LAYOUT-02): memory root, extension seed, retention, rate-limit
guard, Phase 1, then Phase 2."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from memref import store
from memref.config import CodexConfig, load_config
from memref.extensions import seed_ad_hoc_instructions
from memref.guard import rate_limits_ok
from memref.phase1 import Phase1Summary, run_phase1
from memref.phase2 import run_phase2
from memref.releases import DEFAULT as DEFAULT_RELEASE
from memref.releases import Release
from memref.retention import prune_stage1_outputs
from memref.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Session:
    """The session whose start triggers the pipeline."""

    thread_id: str
    env: dict[str, str] = field(default_factory=dict)
    source: str = "cli"
    ephemeral: bool = False
    subagent: bool = False


@dataclass
class StartupResult:
    ran: bool
    skipped_reason: str | None = None
    detail: str | None = None
    steps: list[str] = field(default_factory=list)
    phase1: Phase1Summary | None = None
    phase2: str | None = None


def memory_root(home: Path, config: CodexConfig) -> Path:
    return config.layout.root(home)


def root_problem(root: Path) -> str | None:
    """Why the memory root cannot be used as a directory, or None (START-03: the pipeline
    then does not run, and the path is left as it is)."""
    if root.is_symlink() and not root.exists():
        return f"{root}: the memory root is a symlink to a missing target"
    if root.exists() and not root.is_dir():
        return f"{root}: the memory root is not a directory"
    return None


def guard(config: CodexConfig, session: Session, home: Path) -> str | None:
    """The reason the pipeline must not run at all, or None (START-01, START-02)."""
    if session.ephemeral:
        return "ephemeral"
    if not config.feature_memories:
        return "feature_disabled"
    if session.subagent:
        return "subagent"
    if not (home / store.STATE_DB).is_file():
        return "no_state_db"
    return None


def run_startup(home: Path, session: Session, rt: Runtime,
                release: Release = DEFAULT_RELEASE, pin_version: str | None = None
                ) -> StartupResult:
    """`pin_version`: a `memories.version` given beside config.toml (see `load_config`)."""
    config = load_config(home, release, pin_version)
    reason = guard(config, session, home)
    if reason is not None:
        log.info("memories startup skipped: %s", reason)
        return StartupResult(ran=False, skipped_reason=reason)
    results = [run_layout(home, session, rt, config.for_layout(chosen))
               for chosen in config.write_layouts]
    return results[0] if len(results) == 1 else _merged(results)


def _merged(results: list[StartupResult]) -> StartupResult:
    """One result for the layouts of a dual-write startup, each step named by its layout."""
    return StartupResult(ran=any(r.ran for r in results),
                         skipped_reason=next((r.skipped_reason for r in results
                                              if r.skipped_reason), None),
                         steps=[step for r in results for step in r.steps],
                         phase1=results[0].phase1, phase2=results[0].phase2)


def run_layout(home: Path, session: Session, rt: Runtime, config: CodexConfig
               ) -> StartupResult:
    """The pipeline of one layout: its root, its DB, its two phases."""
    root = memory_root(home, config)
    problem = root_problem(root)
    if problem is not None:
        log.warning("memories startup skipped: %s", problem)
        return StartupResult(ran=False, skipped_reason="memory_root_unusable", detail=problem)
    result = StartupResult(ran=True)
    root.mkdir(parents=True, exist_ok=True)
    result.steps.append("root")
    if seed_ad_hoc_instructions(root):
        result.steps.append("seed_extensions")
    memories = store.memories_db(home, config)
    try:
        pruned = prune_stage1_outputs(memories, max_unused_days=config.memories.max_unused_days,
                                      now=rt.now)
    finally:
        memories.close()
    result.steps.append(f"pruned:{pruned}")
    if not rate_limits_ok(home, config):
        result.skipped_reason = "rate_limited"
        return result
    result.phase1 = run_phase1(home, config, session.thread_id, rt, session.env)
    result.steps.append("phase1")
    result.phase2 = run_phase2(home, root, config, session.thread_id, rt, session.env)
    result.steps.append(f"phase2:{result.phase2}")
    return result

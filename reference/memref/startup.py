"""One startup of the memories pipeline on a Codex home (START-01..START-03)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from memref import store
from memref.config import CodexConfig, load_config
from memref.extensions import seed_ad_hoc_instructions
from memref.runtime import Runtime

log = logging.getLogger(__name__)
INTERACTIVE_SOURCES = ("cli", "vscode")


@dataclass(frozen=True)
class Session:
    """The session whose start triggers the pipeline."""

    thread_id: str
    source: str = "cli"
    ephemeral: bool = False
    subagent: bool = False


@dataclass
class StartupResult:
    ran: bool
    skipped_reason: str | None = None
    steps: list[str] = field(default_factory=list)


def memory_root(home: Path) -> Path:
    return home / "memories"


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


def run_startup(home: Path, session: Session, rt: Runtime) -> StartupResult:
    config = load_config(home)
    reason = guard(config, session, home)
    if reason is not None:
        log.info("memories startup skipped: %s", reason)
        return StartupResult(ran=False, skipped_reason=reason)
    result = StartupResult(ran=True)
    root = memory_root(home)
    root.mkdir(parents=True, exist_ok=True)
    result.steps.append("root")
    if seed_ad_hoc_instructions(root):
        result.steps.append("seed_extensions")
    store.open_memories_db(home).close()
    result.steps.append("memories_db")
    return result

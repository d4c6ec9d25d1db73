"""External context marks a session's thread `polluted` for good, and a thread the last
consolidation used makes the consolidation job run again so it is forgotten (POLL-01..06)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memref import store
from memref.config import CodexConfig
from memref.jobs import enqueue_global, immediate

EXTERNAL_ITEMS = frozenset({"web_search_call", "tool_search_call", "tool_search_output"})


def brings_external_context(item: dict[str, Any]) -> bool:
    """Web and tool search items, and calls to MCP servers that do not declare themselves
    harmless; local tools (the memory tools among them) never do."""
    kind = item.get("type")
    if kind == "mcp_tool_call":
        return item.get("pollutes_memory") is not False
    return kind in EXTERNAL_ITEMS


def record_item(home: Path, config: CodexConfig, thread_id: str, item: dict[str, Any],
                now: int) -> bool:
    """Handle one completed item of a turn; whether the thread became polluted."""
    if not (config.memories.disable_on_external_context and brings_external_context(item)):
        return False
    return mark_polluted(home, config, thread_id, now)


def mark_polluted(home: Path, config: CodexConfig, thread_id: str, now: int) -> bool:
    """Set `memory_mode = 'polluted'`; if the last consolidation selected the thread, enqueue
    the consolidation job (even when the thread was already polluted)."""
    state = store.open_state_db(home)
    if state is None:
        return False
    try:
        if config.layout.db(home).is_file():
            memories = store.memories_db(home, config)
            try:
                with immediate(memories):
                    row = memories.execute("SELECT selected_for_phase2 FROM stage1_outputs"
                                           " WHERE thread_id = ?", (thread_id,)).fetchone()
                    if row is not None and row[0]:
                        enqueue_global(memories, now)
            finally:
                memories.close()
        with immediate(state):
            changed = state.execute("UPDATE threads SET memory_mode = 'polluted'"
                                    " WHERE id = ? AND memory_mode <> 'polluted'",
                                    (thread_id,)).rowcount
    finally:
        state.close()
    return changed > 0

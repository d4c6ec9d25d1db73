"""Phase-2 input selection: which stage-1 outputs one consolidation sees (P2-SEL-01..05)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

DAY_S = 86_400
PAGE = 512
RECENCY = "COALESCE(last_usage, source_updated_at)"

# Blank means only ASCII whitespace; SQLite's one-argument trim() would strip spaces only.
BLANK = "' ' || char(9, 10, 11, 12, 13)"
ELIGIBLE = (
    f"(length(trim(raw_memory, {BLANK})) > 0 OR length(trim(rollout_summary, {BLANK})) > 0)"
    f" AND {RECENCY} >= :cutoff"
)
RANK = f"COALESCE(usage_count, 0) DESC, {RECENCY} DESC, source_updated_at DESC, thread_id DESC"


def unused_cutoff(now: int, max_unused_days: int) -> int:
    """The oldest recency still inside the `max_unused_days` window (P2-SEL-01, RET-01)."""
    return now - max(max_unused_days, 0) * DAY_S


@dataclass(frozen=True)
class Selected:
    thread_id: str
    source_updated_at: int
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None
    cwd: str
    rollout_path: str
    git_branch: str | None

    @property
    def key(self) -> tuple[str, int]:
        return self.thread_id, self.source_updated_at


def _thread(state: sqlite3.Connection, thread_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = state.execute(
        "SELECT cwd, rollout_path, git_branch FROM threads WHERE id = ? AND"
        " memory_mode = 'enabled'", (thread_id,)).fetchone()
    return row


def select(memories: sqlite3.Connection, state: sqlite3.Connection, *, limit: int,
           max_unused_days: int, now: int) -> list[Selected]:
    """The top `limit` eligible outputs of enabled threads, in ascending thread-id order.

    Ranked by usage, then last use (or source time), then source time, then id; threads that
    are missing or not `enabled` do not take a slot. Each kept row is re-read by its exact
    `(thread_id, source_updated_at)` snapshot, so a row refreshed meanwhile drops out."""
    if limit <= 0:
        return []
    cutoff = unused_cutoff(now, max_unused_days)
    kept: list[tuple[str, int, sqlite3.Row]] = []
    offset, page = 0, min(limit, PAGE)
    while len(kept) < limit:
        rows = memories.execute(
            f"SELECT thread_id, source_updated_at FROM stage1_outputs WHERE {ELIGIBLE}"
            f" ORDER BY {RANK} LIMIT :page OFFSET :offset",
            {"cutoff": cutoff, "page": page, "offset": offset}).fetchall()
        for row in rows:
            thread = _thread(state, row["thread_id"])
            if thread is not None and len(kept) < limit:
                kept.append((row["thread_id"], row["source_updated_at"], thread))
        if len(rows) < page:
            break
        offset += page
    selected: list[Selected] = []
    for thread_id, source_updated_at, thread in kept:
        row = memories.execute(
            "SELECT raw_memory, rollout_summary, rollout_slug FROM stage1_outputs"
            " WHERE thread_id = ? AND source_updated_at = ?",
            (thread_id, source_updated_at)).fetchone()
        if row is not None:
            selected.append(Selected(thread_id, source_updated_at, row["raw_memory"],
                                     row["rollout_summary"], row["rollout_slug"],
                                     thread["cwd"], thread["rollout_path"],
                                     thread["git_branch"]))
    return sorted(selected, key=lambda s: s.thread_id.encode("utf-8"))

"""Phase-2 input selection: which stage-1 outputs one consolidation sees (P2-SEL-01..05)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

DAY_S = 86_400
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


ENABLED = "memory_mode = 'enabled'"
BATCH = 500  # SQLite host parameters per lookup stay well under the limit


def _in_batches(con: sqlite3.Connection, sql: str, ids: list[str]) -> Iterator[sqlite3.Row]:
    """The rows of `sql` for every id, BATCH ids at a time (`{ids}` marks the placeholders)."""
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        yield from con.execute(sql.format(ids=", ".join("?" for _ in chunk)), chunk)


def _threads(state: sqlite3.Connection, thread_ids: list[str]) -> dict[str, sqlite3.Row]:
    """The enabled threads among `thread_ids`, by id."""
    return {row["id"]: row for row in _in_batches(
        state, "SELECT id, cwd, rollout_path, git_branch FROM threads WHERE id IN ({ids})"
        f" AND {ENABLED}", thread_ids)}


def _snapshots(memories: sqlite3.Connection, keys: list[tuple[str, int]]
               ) -> dict[tuple[str, int], sqlite3.Row]:
    """The stored payload of each exact `(thread_id, source_updated_at)` still present."""
    wanted = set(keys)
    rows = _in_batches(memories, "SELECT thread_id, source_updated_at, raw_memory,"
                       " rollout_summary, rollout_slug FROM stage1_outputs WHERE thread_id IN"
                       " ({ids})", [thread_id for thread_id, _ in keys])
    return {key: row for row in rows
            if (key := (row["thread_id"], row["source_updated_at"])) in wanted}


def select(memories: sqlite3.Connection, state: sqlite3.Connection, *, limit: int,
           max_unused_days: int, now: int) -> list[Selected]:
    """The top `limit` eligible outputs of enabled threads, in ascending thread-id order.

    Ranked by usage, then last use (or source time), then source time, then id; threads that
    are missing or not `enabled` do not take a slot. Each kept row is re-read by its exact
    `(thread_id, source_updated_at)` snapshot, so a row refreshed meanwhile drops out."""
    cutoff = unused_cutoff(now, max_unused_days)
    kept: list[tuple[str, int, sqlite3.Row]] = []
    offset = 0
    while len(kept) < limit:  # pages of `limit` rows: SQLite sorts only the top of the table
        rows = memories.execute(
            f"SELECT thread_id, source_updated_at FROM stage1_outputs WHERE {ELIGIBLE}"
            f" ORDER BY {RANK} LIMIT :page OFFSET :offset",
            {"cutoff": cutoff, "page": limit, "offset": offset}).fetchall()
        threads = _threads(state, [row["thread_id"] for row in rows])
        kept += [(row["thread_id"], row["source_updated_at"], threads[row["thread_id"]])
                 for row in rows if row["thread_id"] in threads][:limit - len(kept)]
        if len(rows) < limit:
            break
        offset += limit
    stored = _snapshots(memories, [(tid, source) for tid, source, _ in kept])
    selected = [Selected(tid, source, row["raw_memory"], row["rollout_summary"],
                         row["rollout_slug"], thread["cwd"], thread["rollout_path"],
                         thread["git_branch"])
                for tid, source, thread in kept if (row := stored.get((tid, source)))]
    return sorted(selected, key=lambda s: s.thread_id.encode("utf-8"))

"""Phase-1 candidate scan over the state DB's `threads` table (P1-CAND-02, P1-CAND-03)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

SCAN_LIMIT = 5000
ALLOWED_SOURCES = ("cli", "vscode")
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True)
class Candidate:
    id: str
    rollout_path: str
    updated_at_ms: int
    cwd: str
    git_branch: str | None

    @property
    def watermark(self) -> int:
        """The thread's update time in whole seconds: the stage-1 input watermark."""
        return self.updated_at_ms // 1000


def scan(con: sqlite3.Connection, *, now_ms: int, current_thread_id: str, max_age_days: int,
         min_idle_hours: int, scan_limit: int = SCAN_LIMIT) -> list[Candidate]:
    """Eligible idle threads, newest first; both window ends are inclusive."""
    if scan_limit <= 0:
        return []
    marks = ", ".join("?" for _ in ALLOWED_SOURCES)
    rows = con.execute(
        "SELECT id, rollout_path, updated_at_ms, cwd, git_branch FROM threads"
        " WHERE archived = 0 AND preview <> '' AND source IN (" + marks + ")"
        " AND memory_mode = 'enabled' AND history_mode = 'legacy' AND id != ?"
        " AND updated_at_ms >= ? AND updated_at_ms <= ?"
        " ORDER BY updated_at_ms DESC LIMIT ?",
        (*ALLOWED_SOURCES, current_thread_id, now_ms - max(max_age_days, 0) * DAY_MS,
         now_ms - max(min_idle_hours, 0) * HOUR_MS, scan_limit),
    ).fetchall()
    return [Candidate(r["id"], r["rollout_path"], r["updated_at_ms"], r["cwd"], r["git_branch"])
            for r in rows]

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

    @property
    def watermark(self) -> int:
        """The thread's update time in whole seconds: the stage-1 input watermark."""
        return self.updated_at_ms // 1000


# Each filter binds the named parameters of `scan`; both window ends are inclusive.
FILTERS = (
    "archived = 0",
    "preview <> ''",
    "source IN ('" + "', '".join(ALLOWED_SOURCES) + "')",
    "memory_mode = 'enabled'",
    "history_mode = 'legacy'",
    "id != :current",
    "updated_at_ms >= :oldest",
    "updated_at_ms <= :newest",
)
ORDER = "updated_at_ms DESC"


def scan(con: sqlite3.Connection, *, now_ms: int, current_thread_id: str, max_age_days: int,
         min_idle_hours: int) -> list[Candidate]:
    """Eligible idle threads, newest first, at most SCAN_LIMIT of them."""
    rows = con.execute(
        "SELECT id, rollout_path, updated_at_ms, cwd FROM threads WHERE "
        + " AND ".join(FILTERS) + f" ORDER BY {ORDER} LIMIT :limit",
        {"current": current_thread_id, "oldest": now_ms - max(max_age_days, 0) * DAY_MS,
         "newest": now_ms - max(min_idle_hours, 0) * HOUR_MS, "limit": SCAN_LIMIT},
    ).fetchall()
    return [Candidate(r["id"], r["rollout_path"], r["updated_at_ms"], r["cwd"]) for r in rows]

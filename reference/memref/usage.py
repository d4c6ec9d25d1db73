"""Usage write-back: the stage-1 outputs an assistant message cites (USAGE-01..USAGE-03)."""

from __future__ import annotations

import sqlite3

from memref.jobs import immediate


def record_usage(con: sqlite3.Connection, thread_ids: list[str], now: int) -> int:
    """One use per listed id (duplicates included), all stamped with the same `now`; ids
    without a row are ignored. Returns the number of row updates."""
    with immediate(con):
        return sum(con.execute(
            "UPDATE stage1_outputs SET usage_count = COALESCE(usage_count, 0) + 1,"
            " last_usage = ? WHERE thread_id = ?", (now, thread_id)).rowcount
            for thread_id in thread_ids)

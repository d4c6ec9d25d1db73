"""Startup pruning of stale, unselected stage-1 outputs (RET-01, RET-02)."""

from __future__ import annotations

import sqlite3

from memref.jobs import immediate

PRUNE_BATCH = 200
DAY_S = 86_400


def prune_stage1_outputs(con: sqlite3.Connection, *, max_unused_days: int, now: int,
                         limit: int = PRUNE_BATCH) -> int:
    """Delete up to `limit` rows not in the last Phase-2 selection whose last use (or source
    time) is older than the cutoff, oldest first. Job rows are never touched."""
    if limit <= 0:
        return 0
    cutoff = now - max(max_unused_days, 0) * DAY_S
    with immediate(con):
        return con.execute(
            "DELETE FROM stage1_outputs WHERE thread_id IN (SELECT thread_id FROM stage1_outputs"
            " WHERE selected_for_phase2 = 0 AND COALESCE(last_usage, source_updated_at) < ?"
            " ORDER BY COALESCE(last_usage, source_updated_at) ASC, source_updated_at ASC,"
            " thread_id ASC LIMIT ?)", (cutoff, limit)).rowcount

"""Startup pruning of stale, unselected stage-1 outputs (RET-01, RET-02)."""

from __future__ import annotations

import sqlite3

from memref.jobs import immediate
from memref.selection import RECENCY, unused_cutoff

PRUNE_BATCH = 200
# RET-02: oldest first (last use, else source time), then source time, then thread id
PRUNE_ORDER = f"{RECENCY} ASC, source_updated_at ASC, thread_id ASC"


def prune_stage1_outputs(con: sqlite3.Connection, *, max_unused_days: int, now: int) -> int:
    """Delete up to PRUNE_BATCH rows not in the last Phase-2 selection whose last use (or source
    time) is older than the cutoff, oldest first. Job rows are never touched."""
    cutoff = unused_cutoff(now, max_unused_days)
    with immediate(con):
        return con.execute(
            "DELETE FROM stage1_outputs WHERE thread_id IN (SELECT thread_id FROM stage1_outputs"
            f" WHERE selected_for_phase2 = 0 AND {RECENCY} < ?"
            f" ORDER BY {PRUNE_ORDER} LIMIT ?)",
            (cutoff, PRUNE_BATCH)).rowcount

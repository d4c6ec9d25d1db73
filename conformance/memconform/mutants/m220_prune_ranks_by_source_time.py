"""The 200-row pruning batch ranks rows by source time, ignoring a last use (the cutoff still
reads it)."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import retention, startup
from memref.adapter import ReferenceAdapter
from memref.jobs import immediate
from memref.selection import RECENCY, unused_cutoff

MUTANT = Mutant("m220-prune-ranks-by-source-time", __doc__ or "",
                ("p1.ret.batch-order[last-use-before-source-time]",))


def prune_stage1_outputs(con: sqlite3.Connection, *, max_unused_days: int, now: int) -> int:
    cutoff = unused_cutoff(now, max_unused_days)
    with immediate(con):
        return con.execute(
            "DELETE FROM stage1_outputs WHERE thread_id IN (SELECT thread_id FROM stage1_outputs"
            f" WHERE selected_for_phase2 = 0 AND {RECENCY} < ?"
            f" ORDER BY source_updated_at ASC, thread_id ASC LIMIT ?)",
            (cutoff, retention.PRUNE_BATCH)).rowcount


def factory() -> ReferenceAdapter:
    patch(startup, "prune_stage1_outputs", prune_stage1_outputs)
    return ReferenceAdapter()

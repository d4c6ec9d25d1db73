"""The 200-row pruning batch breaks ties on last use by thread id alone, skipping the source
time."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import retention, startup
from memref.adapter import ReferenceAdapter
from memref.jobs import immediate
from memref.selection import RECENCY, unused_cutoff

MUTANT = Mutant("m219-prune-ties-skip-source-time", __doc__ or "",
                ("p1.ret.batch-order[tie-broken-by-source-time]",))


def prune_stage1_outputs(con: sqlite3.Connection, *, max_unused_days: int, now: int) -> int:
    cutoff = unused_cutoff(now, max_unused_days)
    with immediate(con):
        return con.execute(
            "DELETE FROM stage1_outputs WHERE thread_id IN (SELECT thread_id FROM stage1_outputs"
            f" WHERE selected_for_phase2 = 0 AND {RECENCY} < ?"
            f" ORDER BY {RECENCY} ASC, thread_id ASC LIMIT ?)",
            (cutoff, retention.PRUNE_BATCH)).rowcount


def factory() -> ReferenceAdapter:
    patch(startup, "prune_stage1_outputs", prune_stage1_outputs)
    return ReferenceAdapter()

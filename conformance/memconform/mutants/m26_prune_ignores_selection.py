"""Retention also prunes rows that are in the last Phase-2 selection."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import retention, startup
from memref.adapter import ReferenceAdapter
from memref.jobs import immediate
from memref.selection import unused_cutoff

MUTANT = Mutant("m26-prune-ignores-selection", __doc__ or "", ("p1.ret.prune",))


def _prune(con: sqlite3.Connection, *, max_unused_days: int, now: int,
           limit: int = retention.PRUNE_BATCH) -> int:
    cutoff = unused_cutoff(now, max_unused_days)
    with immediate(con):
        return con.execute("DELETE FROM stage1_outputs WHERE "
                           "COALESCE(last_usage, source_updated_at) < ?", (cutoff,)).rowcount


def factory() -> ReferenceAdapter:
    patch(startup, "prune_stage1_outputs", _prune)
    return ReferenceAdapter()

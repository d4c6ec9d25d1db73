"""A running job counts as leased forever: a dead worker's job is never re-claimed."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m18-lease-never-expires", __doc__ or "",
                ("p1.job.state[expired-lease-reclaimed]", "p1.job.stale-token"))


def _live(row: sqlite3.Row, now: int) -> bool:
    return bool(row["status"] == "running")


def factory() -> ReferenceAdapter:
    patch(jobs, "holds_live_lease", _live)
    return ReferenceAdapter()

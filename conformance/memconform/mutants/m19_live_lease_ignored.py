"""A live lease held by another worker does not stop a claim."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m19-live-lease-ignored", __doc__ or "",
                ("p1.job.state[live-lease-held]", "p1.race.same-thread"))


def _never_live(row: sqlite3.Row, now: int) -> bool:
    return False


def factory() -> ReferenceAdapter:
    patch(jobs, "holds_live_lease", _never_live)
    return ReferenceAdapter()

"""A failed consolidation run is recorded only while the job row still carries the run's token:
a row that lost its token stays running until its lease ends."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m192-failure-needs-token", __doc__ or "", ("p2.race.tokenless-failure",))


def factory() -> ReferenceAdapter:
    original = jobs.global_failed

    def global_failed(con: sqlite3.Connection, token: str, reason: str, now: int, *,
                      or_unowned: bool = False) -> bool:
        return original(con, token, reason, now)

    patch(jobs, "global_failed", global_failed)
    return ReferenceAdapter()

"""A failed job records no last_error."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m37-failure-reason-dropped", __doc__ or "",
                ("p1.out.invalid[not-json]", "p1.in.unreadable-rollout"))
_original = jobs.failed


def _silent(con: sqlite3.Connection, thread_id: str, token: str, reason: str, now: int) -> bool:
    return _original(con, thread_id, token, "", now)


def factory() -> ReferenceAdapter:
    patch(jobs, "failed", _silent)
    return ReferenceAdapter()

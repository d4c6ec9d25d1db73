"""Finishing a job does not check the ownership token: a stale owner can commit."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m20-stale-token-commits", __doc__ or "", ("p1.job.stale-token",))
_original = jobs._finish_owned


def _finish_any(con: sqlite3.Connection, thread_id: str, token: str, now: int) -> int | None:
    row = con.execute("SELECT ownership_token FROM jobs WHERE kind = ? AND job_key = ?",
                      (jobs.STAGE1, thread_id)).fetchone()
    return _original(con, thread_id, row[0] if row else token, now)


def factory() -> ReferenceAdapter:
    patch(jobs, "_finish_owned", _finish_any)
    return ReferenceAdapter()

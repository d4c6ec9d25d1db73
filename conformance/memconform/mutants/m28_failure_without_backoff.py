"""A failed extraction is retried immediately (no one-hour backoff)."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m28-failure-without-backoff", __doc__ or "",
                ("p1.out.invalid[not-json]", "p1.model.fault[http-500]"))
_original = jobs.failed


def _no_backoff(con: sqlite3.Connection, thread_id: str, token: str, reason: str,
                now: int) -> bool:
    applied = _original(con, thread_id, token, reason, now)
    with jobs.immediate(con):
        con.execute("UPDATE jobs SET retry_at = ? WHERE kind = ? AND job_key = ?",
                    (now, jobs.STAGE1, thread_id))
    return applied


def factory() -> ReferenceAdapter:
    patch(jobs, "failed", _no_backoff)
    return ReferenceAdapter()

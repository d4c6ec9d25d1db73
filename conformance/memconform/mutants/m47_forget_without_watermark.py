"""Forgetting leaves no success watermark, so the thread is extracted again and again."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m47-forget-without-watermark", __doc__ or "",
                ("p1.empty.not-re-extracted", "p1.empty.forget"))
_original = jobs.succeeded_no_output


def _forgetful(con: sqlite3.Connection, thread_id: str, token: str, now: int) -> bool:
    done = _original(con, thread_id, token, now)
    con.execute("UPDATE jobs SET last_success_watermark = NULL WHERE kind = ? AND job_key = ?",
                (jobs.STAGE1, thread_id))
    return done


def factory() -> ReferenceAdapter:
    patch(jobs, "succeeded_no_output", _forgetful)
    return ReferenceAdapter()

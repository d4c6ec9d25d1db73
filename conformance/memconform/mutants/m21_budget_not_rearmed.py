"""A newer thread update does not lift an exhausted retry budget."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m21-budget-not-rearmed", __doc__ or "",
                ("p1.job.state[exhausted-but-newer-input]",))
_original = jobs.claim_stage1


def _claim(con: sqlite3.Connection, thread_id: str, watermark: int, *, worker: str,
           token: str, now: int, max_running: int) -> jobs.ClaimResult:
    row = con.execute("SELECT retry_remaining FROM jobs WHERE kind = ? AND job_key = ?",
                      (jobs.STAGE1, thread_id)).fetchone()
    if row is not None and row[0] <= 0:
        return jobs.ClaimResult(jobs.Claim.EXHAUSTED)
    return _original(con, thread_id, watermark, worker=worker, token=token, now=now,
                     max_running=max_running)


def factory() -> ReferenceAdapter:
    patch(jobs, "claim_stage1", _claim)
    return ReferenceAdapter()

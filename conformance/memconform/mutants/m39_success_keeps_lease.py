"""A finished job keeps its lease and running status (finishing only records the output)."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m39-success-keeps-lease", __doc__ or "", ("p1.job.success", "p1.job.machine"))


def _owned_only(con: sqlite3.Connection, thread_id: str, token: str, now: int) -> int | None:
    row = con.execute(
        "SELECT input_watermark FROM jobs WHERE kind = ? AND job_key = ? AND status = 'running'"
        " AND ownership_token = ?", (jobs.STAGE1, thread_id, token)).fetchone()
    return None if row is None else int(row[0])


def factory() -> ReferenceAdapter:
    patch(jobs, "_finish_owned", _owned_only)
    return ReferenceAdapter()

"""The consolidation claim treats now itself as still inside the retry backoff and the
running lease (`retry_at >= now`, `lease_until >= now`)."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m153-claim-bounds-inclusive", __doc__ or "",
                ("p2.job.claim[retry-at-now-claims]", "p2.job.claim[lease-until-now-claims]"))
_claim_global = jobs.claim_global


def claim_global(con: sqlite3.Connection, *, worker: str, token: str,
                 now: int) -> tuple[jobs.GlobalClaim, int]:
    row = con.execute("SELECT retry_at, status, lease_until FROM jobs WHERE kind = ? AND"
                      " job_key = ?", (jobs.GLOBAL, jobs.GLOBAL_KEY)).fetchone()
    if row is not None and row[0] is not None and row[0] == now:
        return jobs.GlobalClaim.BACKOFF, 0
    if row is not None and row[1] == "running" and row[2] is not None and row[2] == now:
        return jobs.GlobalClaim.RUNNING, 0
    return _claim_global(con, worker=worker, token=token, now=now)


def factory() -> ReferenceAdapter:
    patch(jobs, "claim_global", claim_global)
    return ReferenceAdapter()

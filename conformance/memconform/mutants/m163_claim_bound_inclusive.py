"""A stage-1 job still counts as backing off when retry_at = now, and its lease as live when
lease_until = now: both ends are taken as inclusive."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter
from memref.jobs import (
    LEASE_S,
    RETRY_BUDGET,
    STAGE1,
    Claim,
    ClaimResult,
    immediate,
    is_up_to_date,
)

MUTANT = Mutant("m163-claim-bound-inclusive", __doc__ or "",
                ("p1.job.state[backoff-ends-now]",
                 "p1.job.state[lease-ends-now]"))


# the reference's claim, with the bug on the lines marked "mutant"
def claim_stage1(con: sqlite3.Connection, thread_id: str, watermark: int, *, worker: str,
                 token: str, now: int, max_running: int) -> ClaimResult:
    lease_until = now + LEASE_S
    with immediate(con):
        if is_up_to_date(con, thread_id, watermark):
            return ClaimResult(Claim.UP_TO_DATE)
        live_others = con.execute(
            "SELECT count(*) FROM jobs WHERE kind = ? AND job_key != ? AND status = 'running' "
            "AND lease_until IS NOT NULL AND lease_until > ?", (STAGE1, thread_id, now),
        ).fetchone()[0]
        row = con.execute("SELECT * FROM jobs WHERE kind = ? AND job_key = ?",
                          (STAGE1, thread_id)).fetchone()
        if row is None:
            if live_others >= max_running:
                return ClaimResult(Claim.RUNNING)
            con.execute(
                "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at,"
                " finished_at, lease_until, retry_at, retry_remaining, last_error,"
                " input_watermark, last_success_watermark)"
                " VALUES (?, ?, 'running', ?, ?, ?, NULL, ?, NULL, ?, NULL, ?, NULL)",
                (STAGE1, thread_id, worker, token, now, lease_until, RETRY_BUDGET, watermark))
            return ClaimResult(Claim.CLAIMED, token)
        newer = watermark > (row["input_watermark"] if row["input_watermark"] is not None else -1)
        live = (row["status"] == "running" and row["lease_until"] is not None
                and row["lease_until"] >= now)  # mutant
        backoff_over = row["retry_at"] is None or row["retry_at"] < now or newer  # mutant
        budget_left = row["retry_remaining"] > 0 or newer
        if not live and backoff_over and budget_left and live_others < max_running:
            con.execute(
                "UPDATE jobs SET status = 'running', worker_id = ?, ownership_token = ?,"
                " started_at = ?, finished_at = NULL, lease_until = ?, retry_at = NULL,"
                " retry_remaining = ?, last_error = NULL, input_watermark = ?"
                " WHERE kind = ? AND job_key = ?",
                (worker, token, now, lease_until,
                 RETRY_BUDGET if newer else row["retry_remaining"], watermark, STAGE1, thread_id))
            return ClaimResult(Claim.CLAIMED, token)
        if row["retry_remaining"] <= 0:
            return ClaimResult(Claim.EXHAUSTED)
        if row["retry_at"] is not None and row["retry_at"] >= now:  # mutant
            return ClaimResult(Claim.BACKOFF)
        return ClaimResult(Claim.RUNNING)


def factory() -> ReferenceAdapter:
    patch(jobs, "claim_stage1", claim_stage1)
    return ReferenceAdapter()

"""The `jobs` table: the per-thread stage-1 job state machine (P1-JOB) and the enqueue of the
global consolidation job (P2-JOB-08). Every write runs in one `BEGIN IMMEDIATE` transaction
and every finaliser matches on `status = 'running' AND ownership_token = ?`.
"""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memref.stage1_output import StageOneOutput

STAGE1 = "memory_stage1"
GLOBAL = "memory_consolidate_global"
GLOBAL_KEY = "global"
LEASE_S = 3600
RETRY_DELAY_S = 3600
RETRY_BUDGET = 3


class Claim(enum.Enum):
    CLAIMED = "claimed"
    UP_TO_DATE = "skipped_up_to_date"
    RUNNING = "skipped_running"
    BACKOFF = "skipped_retry_backoff"
    EXHAUSTED = "skipped_retry_exhausted"


@dataclass(frozen=True)
class ClaimResult:
    outcome: Claim
    token: str | None = None


@contextmanager
def immediate(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction with the writer lock taken up front."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def is_up_to_date(con: sqlite3.Connection, thread_id: str, watermark: int) -> bool:
    """An output or a success at least as new as `watermark` (startup pre-check and claim)."""
    out = con.execute("SELECT source_updated_at FROM stage1_outputs WHERE thread_id = ?",
                      (thread_id,)).fetchone()
    if out is not None and out[0] >= watermark:
        return True
    job = con.execute("SELECT last_success_watermark FROM jobs WHERE kind = ? AND job_key = ?",
                      (STAGE1, thread_id)).fetchone()
    return job is not None and job[0] is not None and job[0] >= watermark


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
        live = holds_live_lease(row, now)
        backoff_over = row["retry_at"] is None or row["retry_at"] <= now or newer
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
        if row["retry_at"] is not None and row["retry_at"] > now:
            return ClaimResult(Claim.BACKOFF)
        return ClaimResult(Claim.RUNNING)


def holds_live_lease(row: sqlite3.Row, now: int) -> bool:
    return bool(row["status"] == "running" and row["lease_until"] is not None
                and row["lease_until"] > now)


def _finish_owned(con: sqlite3.Connection, thread_id: str, token: str, now: int) -> int | None:
    """Mark the owned running row done; its input watermark, or None when not owned."""
    row = con.execute(
        "SELECT input_watermark FROM jobs WHERE kind = ? AND job_key = ? AND status = 'running'"
        " AND ownership_token = ?", (STAGE1, thread_id, token)).fetchone()
    if row is None:
        return None
    con.execute(
        "UPDATE jobs SET status = 'done', finished_at = ?, lease_until = NULL, last_error = NULL,"
        " last_success_watermark = input_watermark WHERE kind = ? AND job_key = ?",
        (now, STAGE1, thread_id))
    return int(row[0])


def succeeded(con: sqlite3.Connection, thread_id: str, token: str, watermark: int,
              output: StageOneOutput, now: int) -> bool:
    """Success with output: finish, upsert the row (never older over newer), enqueue Phase 2."""
    with immediate(con):
        if _finish_owned(con, thread_id, token, now) is None:
            return False
        con.execute(
            "INSERT INTO stage1_outputs (thread_id, source_updated_at, raw_memory,"
            " rollout_summary, rollout_slug, generated_at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(thread_id) DO UPDATE SET source_updated_at = excluded.source_updated_at,"
            " raw_memory = excluded.raw_memory, rollout_summary = excluded.rollout_summary,"
            " rollout_slug = excluded.rollout_slug, generated_at = excluded.generated_at"
            " WHERE excluded.source_updated_at >= stage1_outputs.source_updated_at",
            (thread_id, watermark, output.raw_memory, output.rollout_summary,
             output.rollout_slug, now))
        enqueue_global(con, watermark)
    return True


def succeeded_no_output(con: sqlite3.Connection, thread_id: str, token: str, now: int) -> bool:
    """Empty output: finish, delete the thread's row (forget), enqueue Phase 2 if one went."""
    with immediate(con):
        watermark = _finish_owned(con, thread_id, token, now)
        if watermark is None:
            return False
        deleted = con.execute("DELETE FROM stage1_outputs WHERE thread_id = ?",
                              (thread_id,)).rowcount
        if deleted:
            enqueue_global(con, watermark)
    return True


def failed(con: sqlite3.Connection, thread_id: str, token: str, reason: str, now: int) -> bool:
    with immediate(con):
        changed = con.execute(
            "UPDATE jobs SET status = 'error', finished_at = ?, lease_until = NULL,"
            " retry_at = ?, retry_remaining = retry_remaining - 1, last_error = ?"
            " WHERE kind = ? AND job_key = ? AND status = 'running' AND ownership_token = ?",
            (now, now + RETRY_DELAY_S, reason, STAGE1, thread_id, token)).rowcount
    return changed > 0


def enqueue_global(con: sqlite3.Connection, watermark: int) -> None:
    """Create or advance the singleton consolidation job; its watermark always increases.
    Runs inside the caller's transaction."""
    con.execute(
        "INSERT INTO jobs (kind, job_key, status, retry_remaining, input_watermark,"
        " last_success_watermark) VALUES (?, ?, 'pending', ?, ?, 0)"
        " ON CONFLICT(kind, job_key) DO UPDATE SET"
        " status = CASE WHEN jobs.status = 'running' THEN 'running' ELSE 'pending' END,"
        " retry_at = CASE WHEN jobs.status = 'running' THEN jobs.retry_at ELSE NULL END,"
        " retry_remaining = max(jobs.retry_remaining, ?),"
        " input_watermark = CASE WHEN ? > COALESCE(jobs.input_watermark, 0) THEN ?"
        " ELSE COALESCE(jobs.input_watermark, 0) + 1 END",
        (GLOBAL, GLOBAL_KEY, RETRY_BUDGET, watermark, RETRY_BUDGET, watermark, watermark))


class GlobalClaim(enum.Enum):
    CLAIMED = "claimed"
    BACKOFF = "skipped_retry_unavailable"
    RUNNING = "skipped_running"
    COOLDOWN = "skipped_cooldown"


COOLDOWN_S = 21_600


def claim_global(con: sqlite3.Connection, *, worker: str, token: str,
                 now: int) -> tuple[GlobalClaim, int]:
    """Claim the singleton consolidation job (P2-JOB-01): the outcome and the row's input
    watermark. Checks run in order: backoff, live lease, success cooldown."""
    lease_until = now + LEASE_S
    with immediate(con):
        row = con.execute("SELECT * FROM jobs WHERE kind = ? AND job_key = ?",
                          (GLOBAL, GLOBAL_KEY)).fetchone()
        if row is None:
            con.execute(
                "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at,"
                " lease_until, retry_remaining, input_watermark, last_success_watermark)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?, ?, 0, 0)",
                (GLOBAL, GLOBAL_KEY, worker, token, now, lease_until, RETRY_BUDGET))
            return GlobalClaim.CLAIMED, 0
        if row["retry_at"] is not None and row["retry_at"] > now:
            return GlobalClaim.BACKOFF, 0
        if holds_live_lease(row, now):
            return GlobalClaim.RUNNING, 0
        if (row["last_error"] is None and row["finished_at"] is not None
                and row["finished_at"] > now - COOLDOWN_S):
            return GlobalClaim.COOLDOWN, 0
        con.execute(
            "UPDATE jobs SET status = 'running', worker_id = ?, ownership_token = ?,"
            " started_at = ?, finished_at = NULL, lease_until = ?, retry_at = NULL,"
            " last_error = NULL WHERE kind = ? AND job_key = ?",
            (worker, token, now, lease_until, GLOBAL, GLOBAL_KEY))
        return GlobalClaim.CLAIMED, int(row["input_watermark"] or 0)


def _owned_global(con: sqlite3.Connection, token: str) -> bool:
    return con.execute("SELECT 1 FROM jobs WHERE kind = ? AND job_key = ? AND status = 'running'"
                       " AND ownership_token = ?", (GLOBAL, GLOBAL_KEY, token)).fetchone() \
        is not None


def heartbeat_global(con: sqlite3.Connection, token: str, now: int) -> bool:
    with immediate(con):
        return con.execute(
            "UPDATE jobs SET lease_until = ? WHERE kind = ? AND job_key = ? AND status = 'running'"
            " AND ownership_token = ?", (now + LEASE_S, GLOBAL, GLOBAL_KEY, token),
        ).rowcount > 0


def global_succeeded(con: sqlite3.Connection, token: str, completed_watermark: int,
                     selected: list[tuple[str, int]], now: int) -> bool:
    """Finish the owned consolidation and rewrite the selection markers to exactly
    `selected` (thread id, source_updated_at) snapshots (P2-JOB-04)."""
    with immediate(con):
        if not _owned_global(con, token):
            return False
        con.execute(
            "UPDATE jobs SET status = 'done', finished_at = ?, lease_until = NULL,"
            " last_error = NULL, last_success_watermark = max(COALESCE(last_success_watermark,"
            " 0), ?) WHERE kind = ? AND job_key = ?",
            (now, completed_watermark, GLOBAL, GLOBAL_KEY))
        con.execute("UPDATE stage1_outputs SET selected_for_phase2 = 0,"
                    " selected_for_phase2_source_updated_at = NULL WHERE selected_for_phase2 != 0"
                    " OR selected_for_phase2_source_updated_at IS NOT NULL")
        con.executemany(
            "UPDATE stage1_outputs SET selected_for_phase2 = 1,"
            " selected_for_phase2_source_updated_at = source_updated_at"
            " WHERE thread_id = ? AND source_updated_at = ?", selected)
        if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                       " AND name = 'consolidation_progress'").fetchone():
            # P2-PROG-01: the most threads one successful consolidation has used
            con.execute("UPDATE consolidation_progress SET max_thread_count ="
                        " max(max_thread_count, ?) WHERE singleton = 1", (len(selected),))
    return True


def global_failed(con: sqlite3.Connection, token: str, reason: str, now: int, *,
                  or_unowned: bool = False) -> bool:
    """Record a failed consolidation with a retry backoff (P2-JOB-04); `or_unowned` also
    recovers a running row whose token was cleared."""
    with immediate(con):
        return con.execute(
            "UPDATE jobs SET status = 'error', finished_at = ?, lease_until = NULL,"
            " retry_at = ?, retry_remaining = max(retry_remaining - 1, 0), last_error = ?"
            " WHERE kind = ? AND job_key = ? AND status = 'running'"
            " AND (ownership_token = ? OR (? AND ownership_token IS NULL))",
            (now, now + RETRY_DELAY_S, reason, GLOBAL, GLOBAL_KEY, token, or_unowned)
        ).rowcount > 0

"""Extraction: after each worker round (or on a manual run) every completed task of a user is
passed through the gates, then stored once as a redacted project-level memory; every skip is
logged with its reason and retried later (CLOUD-GATE-01..06, CLOUD-CONT-01..04).

A sweep commits task by task: each task is claimed (its row locked, skipped if another sweep
holds it), checked again, gated, stored and logged in a transaction of its own, so a crash keeps
the tasks done before it and other users' writes are never queued behind a whole round."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import Connection, and_, delete, exists, insert, select, update

from memref.cloud import db
from memref.cloud import settings as user_settings
from memref.cloud.redact import redact
from memref.cloud.schema import extraction_log, memories, projects, quotas, task_flags, tasks

RESULT_CHARS = 800
LOG_LIMIT = 100


class QuotaLookupError(RuntimeError):
    """The quota store could not be read (the quota gate then fails closed)."""


@dataclass
class Faults:
    """Failures a test can switch on (through the conformance API)."""

    quota_lookup: bool = False
    memory_lookup: bool = False


@dataclass
class SweepResult:
    extracted: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def remaining_percent(con: Connection, user_id: str, now: int, faults: Faults) -> float | None:
    """Quota left this month, in percent; None when unlimited. No row is the default budget
    with nothing used, a row with a NULL limit is unlimited."""
    if faults.quota_lookup:
        raise QuotaLookupError("quota store unavailable")
    month = datetime.fromtimestamp(now, UTC).strftime("%Y-%m")
    row = con.execute(select(quotas).where(and_(quotas.c.user_id == user_id,
                                                quotas.c.month == month))).mappings().first()
    if row is None:
        return 100.0
    limit, used = row["limit_units"], row["used_units"]
    if limit is None:
        return None
    return 0.0 if limit <= 0 else max(limit - used, 0) * 100 / limit


def generate_switch(con: Connection, task_id: str, user_value: bool) -> bool:
    override = con.execute(select(task_flags.c.generate_memories).where(
        task_flags.c.task_id == task_id)).scalar()
    return user_value if override is None else bool(override)


def external_context(con: Connection, task: dict[str, Any]) -> bool:
    if task["followup_messages"] > 0:
        return True
    if task["parent_task_id"] is None:
        return False
    parent = con.execute(select(tasks.c.kind).where(tasks.c.id == task["parent_task_id"]))
    return parent.scalar() == "coordinator"


def gate(con: Connection, task: dict[str, Any], prefs: dict[str, Any], now: int, force: bool,
         faults: Faults) -> str | None:
    """The reason to skip the task now, or None to extract it. `force` lifts only the idle,
    duration and length gates."""
    if not generate_switch(con, task["id"], prefs["generate_memories"]):
        return "generate_disabled"
    if not force:
        if now - (task["finished_at"] or now) < prefs["idle_seconds"]:
            return "not_idle"
        if (task["finished_at"] or 0) - (task["started_at"] or 0) < prefs["min_duration_seconds"]:
            return "too_short"
        if len(task["result"]) < prefs["min_result_chars"]:
            return "result_too_short"
    if prefs["disable_on_external_context"] and external_context(con, task):
        return "external_context"
    try:
        left = remaining_percent(con, task["user_id"], now, faults)
    except QuotaLookupError:
        return "quota_check_failed"
    if left is not None and left < prefs["min_rate_limit_remaining_percent"]:
        return "quota_exhausted"
    return None


def first_line(task: dict[str, Any]) -> str:
    source = str(task["goal"] if task["goal"].strip() else task["prompt"])
    return source.strip().split("\n", 1)[0].strip()


def goal_key(task: dict[str, Any]) -> str:
    """The goal's first line by digest, so a secret in it is stored nowhere unredacted."""
    return hashlib.sha256(first_line(task).encode("utf-8")).hexdigest()


def content(task: dict[str, Any]) -> str:
    """The first line of the goal (else the prompt) and the start of the result, redacted."""
    return redact(f"{first_line(task)}\n{task['result'][:RESULT_CHARS]}")


def store(con: Connection, task: dict[str, Any], now: int) -> None:
    """One project-level memory for the task; the newest result for a goal wins."""
    key = goal_key(task)
    con.execute(insert(memories).values(
        scope="project", project_id=task["project_id"], user_id=None,
        source_task_id=task["id"], goal_key=key, source_finished_at=task["finished_at"],
        content=content(task), created_at=now, superseded=False))
    same_goal = and_(memories.c.scope == "project", memories.c.project_id == task["project_id"],
                     memories.c.goal_key == key)
    newest = con.execute(select(memories.c.id).where(same_goal).order_by(
        memories.c.source_finished_at.desc().nulls_last(), memories.c.id.desc()).limit(1)).scalar()
    con.execute(update(memories).where(same_goal).values(superseded=memories.c.id != newest))


def log(con: Connection, user_id: str, task_id: str, reason: str | None, now: int) -> None:
    """One entry per task, overwritten; only the newest LOG_LIMIT entries of a user stay."""
    db.upsert(con, extraction_log, ["user_id", "task_id"], user_id=user_id, task_id=task_id,
              outcome="skipped" if reason else "extracted", reason=reason, at=now)
    keep = select(extraction_log.c.task_id).where(extraction_log.c.user_id == user_id).order_by(
        extraction_log.c.at.desc(), extraction_log.c.task_id.desc()).limit(LOG_LIMIT)
    con.execute(delete(extraction_log).where(and_(extraction_log.c.user_id == user_id,
                                                  extraction_log.c.task_id.not_in(keep))))


def sweep(con: Connection, now: int, faults: Faults, *, user_id: str | None = None,
          force: bool = False) -> SweepResult:
    """Extract what passes the gates among completed, not yet extracted tasks (of one user,
    or of everyone), one transaction per task. `con` is outside a transaction (what it holds
    is committed first); a task another sweep is working on is left to that sweep."""
    con.commit()
    done = SweepResult()
    pending = select(tasks.c.id).where(and_(
        tasks.c.status == "completed",
        ~exists().where(memories.c.source_task_id == tasks.c.id))).order_by(
        tasks.c.finished_at, tasks.c.id)
    if user_id is not None:
        pending = pending.where(tasks.c.user_id == user_id)
    ids = db.retry_on(con, partial(_pending, con, pending))
    for task_id in ids:
        db.retry_on(con, partial(_one, con, task_id, now, faults, force, done))
    return done


def _pending(con: Connection, pending: Any) -> list[str]:
    ids = [str(i) for i in con.execute(pending).scalars()]
    con.commit()
    return ids


def _one(con: Connection, task_id: str, now: int, faults: Faults, force: bool,
         done: SweepResult) -> None:
    """Claim, gate, store and log one task, then commit; nothing if it is claimed by another
    sweep or already extracted."""
    row = con.execute(select(tasks).where(and_(tasks.c.id == task_id,
                                               tasks.c.status == "completed"))
                      .with_for_update(key_share=True, skip_locked=True)).mappings().first()
    if row is None or con.execute(select(memories.c.id).where(
            memories.c.source_task_id == task_id)).first() is not None:
        con.rollback()
        return
    task = dict(row)
    prefs = user_settings.read(con, task["user_id"])
    reason = gate(con, task, prefs, now, force, faults)
    if reason is None:
        # memories of one project are superseded by goal: its stores go one at a time
        con.execute(select(projects.c.id).where(projects.c.id == task["project_id"])
                    .with_for_update(key_share=True))
        store(con, task, now)
    log(con, task["user_id"], task["id"], reason, now)
    con.commit()
    if reason is None:
        done.extracted.append(task["id"])
    else:
        done.skipped[task["id"]] = reason

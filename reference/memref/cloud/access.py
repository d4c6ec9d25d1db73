"""Who is calling, and what they may do to a task (CLOUD-AUTH-01, CLOUD-FLAG-02)."""

from __future__ import annotations

from typing import Literal

from sqlalchemy import Connection, and_, select

from memref.cloud.schema import members, tasks, users

Access = Literal["none", "member", "creator"]


def user_for(con: Connection, authorization: str | None) -> str | None:
    """The user whose bearer token the header carries, or None."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    found = con.execute(select(users.c.id).where(users.c.token == token)).scalar()
    return None if found is None else str(found)


def task_access(con: Connection, task_id: str, user_id: str) -> Access:
    """`creator` if the user may create tasks in the task's project, `member` if they only
    belong to it, `none` otherwise (or when there is no such task)."""
    row = con.execute(select(members.c.can_create_tasks).select_from(
        tasks.join(members, members.c.project_id == tasks.c.project_id)).where(and_(
            tasks.c.id == task_id, members.c.user_id == user_id))).first()
    if row is None:
        return "none"
    return "creator" if row[0] else "member"

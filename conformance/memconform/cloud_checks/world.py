"""Shared set-up for the cloud checks (not collected: no `test_` prefix): one user in one
project, a completed task that passes every gate, and a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memconform.cloud.client import Cloud, User
from memconform.resources import fixture_json

NOW = int(fixture_json("cloud", "gates.json")["now"])
MONTH = datetime.fromtimestamp(NOW, UTC).strftime("%Y-%m")  # the quota month of NOW
GOAL = "Publish the release notes\nwith care"
PROMPT = "Write the notes"
RESULT = "The notes list every change since the last release, grouped by area. " * 5


def task_fields(project: str = "p", user: str = "u", **overrides: Any) -> dict[str, Any]:
    """A completed task that passes every gate under the defaults."""
    fields: dict[str, Any] = {
        "project_id": project, "user_id": user, "kind": "task", "status": "completed",
        "goal": GOAL, "prompt": PROMPT, "result": RESULT[:300],
        "started_at": NOW - 4000, "finished_at": NOW - 1000, "followup_messages": 0}
    fields.update(overrides)
    return fields


GENERATE = {"generate_memories": True}


def one_user(cloud: Cloud, user_id: str = "u", project: str = "p",
             settings: dict[str, Any] | None = GENERATE) -> User:
    """A user who may create tasks in `project`, with `settings` PUT (None: the defaults,
    which generate nothing)."""
    cloud.clock(NOW)
    user = cloud.user(user_id)
    cloud.project(project, user_id)
    if settings is not None:
        user.settings(**settings)
    return user


def memory_of(cloud: Cloud, task_id: str) -> dict[str, Any] | None:
    found = [m for m in cloud.memories() if m["source_task_id"] == task_id]
    assert len(found) <= 1, f"task {task_id} has {len(found)} memories"
    return found[0] if found else None


def log_entry(user: User, task_id: str) -> dict[str, Any] | None:
    found = [e for e in user.log() if e["task_id"] == task_id]
    assert len(found) <= 1, f"task {task_id} has {len(found)} log entries"
    return found[0] if found else None

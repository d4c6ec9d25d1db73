"""Extracted memories are stored for the task's user instead of its project."""

import sys
from typing import Any

from sqlalchemy import insert

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract
from memref.cloud.schema import memories

MUTANT = Mutant("c04-memories-at-user-level", __doc__ or "",
                ("cloud.content.project-only", "cloud.content.shape"), profile="cloud")


def apply() -> None:
    def store(con: Any, task: dict[str, Any], now: int) -> None:
        con.execute(insert(memories).values(
            scope="user", project_id=None, user_id=task["user_id"], source_task_id=task["id"],
            goal_key=extract.goal_key(task), source_finished_at=task["finished_at"],
            content=extract.content(task), created_at=now, superseded=False))

    patch(extract, "store", store)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

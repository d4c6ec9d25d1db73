"""The memory extracted last is live for its goal, whichever task finished later."""

import sys
from typing import Any

from sqlalchemy import Connection, and_, update

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract
from memref.cloud.schema import memories

MUTANT = Mutant("c17-last-extracted-wins", __doc__ or "",
                ("cloud.content.superseded[older-extracted-later]",), profile="cloud")


def apply() -> None:
    original = extract.store

    def store(con: Connection, task: dict[str, Any], now: int) -> None:
        original(con, task, now)
        con.execute(update(memories).where(and_(
            memories.c.scope == "project", memories.c.project_id == task["project_id"],
            memories.c.goal_key == extract.goal_key(task))).values(
            superseded=memories.c.source_task_id != task["id"]))

    patch(extract, "store", store)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

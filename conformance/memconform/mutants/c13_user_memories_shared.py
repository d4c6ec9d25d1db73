"""A first turn gets the newest user-level memories of any user, not only its own user's."""

import sys
from typing import Any

from sqlalchemy import and_, select

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import inject
from memref.cloud.schema import memories

MUTANT = Mutant("c13-user-memories-shared", __doc__ or "",
                ("cloud.auth.memories-stay-in-project",), profile="cloud")


def apply() -> None:
    def recent(con: Any, task: dict[str, Any], faults: Any) -> list[dict[str, Any]]:
        live = memories.c.superseded.is_(False)
        users = select(memories).where(and_(memories.c.scope == "user", live))
        project = select(memories).where(and_(memories.c.scope == "project", live,
                                              memories.c.project_id == task["project_id"]))
        return [dict(r) for query in (users, project)
                for r in con.execute(query.order_by(memories.c.created_at.desc())
                                     .limit(5)).mappings()]

    patch(inject, "recent", recent)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

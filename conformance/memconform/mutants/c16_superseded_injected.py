"""Injection picks the newest memories whether or not they were superseded."""

import sys
from typing import Any

from sqlalchemy import Connection, and_, select

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import inject
from memref.cloud.extract import Faults
from memref.cloud.schema import memories

MUTANT = Mutant("c16-superseded-injected", __doc__ or "", ("cloud.inject.no-superseded",),
                profile="cloud")


def apply() -> None:
    def recent(con: Connection, task: dict[str, Any], faults: Faults) -> list[dict[str, Any]]:
        if faults.memory_lookup:
            raise inject.MemoryLookupError("memory store unavailable")
        found = []
        for scope, column, owner in (("user", memories.c.user_id, task["user_id"]),
                                     ("project", memories.c.project_id, task["project_id"])):
            found += [dict(r) for r in con.execute(select(memories).where(and_(
                memories.c.scope == scope, column == owner))
                .order_by(memories.c.created_at.desc(), memories.c.id.desc())
                .limit(inject.PER_SCOPE)).mappings()]
        return found

    patch(inject, "recent", recent)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

"""The pipeline tables are created inside state_5.sqlite instead of their own file."""

import sqlite3
from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memconform.resources import codex_schema_statements
from memref import store
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m08-memories-in-state-db", __doc__ or "", ("store.separate-file",))
_original = store.open_memories_db


def _open(home: Path, *args: Any, **kwargs: Any) -> sqlite3.Connection:
    con = store.connect(home / store.STATE_DB)
    for statement in codex_schema_statements("memories_1"):
        if "_sqlx_migrations" not in statement:
            con.execute(statement.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ")
                        .replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS "))
    con.close()
    return _original(home, *args, **kwargs)


def factory() -> ReferenceAdapter:
    patch(store, "open_memories_db", _open)
    return ReferenceAdapter()

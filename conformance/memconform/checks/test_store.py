"""DM: the memories store is its own SQLite file in Codex 0.144.6's exact schema.

The expected schema is the one dumped from the real binary (`fixtures/codex-0.144.6/`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.registry import check
from memconform.resources import codex_schema_statements
from memconform.verdicts import fail


def _shape(con: sqlite3.Connection, table: str) -> dict[str, Any]:
    columns = [tuple(r)[1:] for r in con.execute(f"PRAGMA table_info({table})")]
    indexes = {}
    for row in con.execute(f"PRAGMA index_list({table})"):
        name = row[1]
        if name.startswith("sqlite_autoindex"):
            continue
        keys = [(r[2], r[3]) for r in con.execute(f"PRAGMA index_xinfo({name})") if r[5]]
        indexes[name] = (bool(row[2]), keys)
    return {"columns": columns, "indexes": indexes}


def _expected(table: str) -> dict[str, Any]:
    con = sqlite3.connect(":memory:")
    try:
        for statement in codex_schema_statements("memories_1"):
            con.execute(statement)
        return _shape(con, table)
    finally:
        con.close()


@check("store.schema", title="memories_1.sqlite tables match Codex's columns, types, "
       "defaults, keys and indexes", rules=("DM-02", "DM-03"), level="MUST", area="store")
@pytest.mark.parametrize("table", ["stage1_outputs", "jobs"])
def test_schema(home: CodexHome, run_startup: StartupRunner, table: str) -> None:
    home.ensure_state_db()
    run_startup(home)
    assert home.memories_db.is_file(), "the startup did not create memories_1.sqlite"
    con = sqlite3.connect(f"file:{home.memories_db}?mode=ro", uri=True)
    try:
        actual = _shape(con, table)
    except sqlite3.DatabaseError:
        fail("memories_1.sqlite is not a readable SQLite database")
    finally:
        con.close()
    expected = _expected(table)
    assert actual["columns"], f"memories_1.sqlite has no {table} table"
    assert actual["columns"] == expected["columns"], \
        f"the {table} columns differ from Codex's (name, type, not null, default, key)"
    assert actual["indexes"] == expected["indexes"], \
        f"the {table} indexes differ from Codex's (name: unique, [column, descending])"


@check("store.separate-file", title="pipeline tables live in memories_1.sqlite, not in the "
       "state DB", rules="DM-01", level="MUST", area="store")
def test_separate_file(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    run_startup(home)
    tables = {r["name"] for r in home.query(
        home.state_db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "threads" in tables, "the threads table is gone from state_5.sqlite"
    assert sorted(tables & {"stage1_outputs", "jobs"}) == [], \
        "pipeline tables were created in state_5.sqlite"
    assert home.memories_db.is_file(), "the startup did not create memories_1.sqlite"

"""The two SQLite files of a Codex home, in Codex 0.144.6's on-disk schema (DM-01..DM-03)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from memconform.resources import codex_schema_statements

STATE_DB = "state_5.sqlite"
MEMORIES_DB = "memories_1.sqlite"
BUSY_TIMEOUT_S = 30.0
WAL_ATTEMPTS = 200
WAL_RETRY_S = 0.05


class StoreError(RuntimeError):
    """A store file exists but is not a usable Codex database."""


def connect(path: Path) -> sqlite3.Connection:
    """Open in autocommit mode; callers use explicit `BEGIN IMMEDIATE` for writes that race."""
    con = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    con.row_factory = sqlite3.Row
    _use_wal(con)
    con.execute("PRAGMA foreign_keys=ON")
    return con


def _use_wal(con: sqlite3.Connection) -> None:
    """Switch to WAL. The switch can report "locked" without waiting while another process
    creates the same file, so it is retried, bounded in count and time."""
    for attempt in range(WAL_ATTEMPTS):
        try:
            if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                con.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == WAL_ATTEMPTS - 1:
                raise
            time.sleep(WAL_RETRY_S)


def _has_table(con: sqlite3.Connection, table: str) -> bool:
    row = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,))
    return row.fetchone() is not None


def ensure_schema(con: sqlite3.Connection, db: str, marker_table: str) -> None:
    """Create the schema unless present, check and create in one `BEGIN IMMEDIATE` transaction."""
    con.execute("BEGIN IMMEDIATE")
    try:
        if not _has_table(con, marker_table):
            if _has_table(con, "_sqlx_migrations"):
                raise StoreError(f"damaged {db} database: migrations are recorded but table "
                                 f"`{marker_table}` is missing (move the file away to start "
                                 "over)")
            for statement in codex_schema_statements(db):
                con.execute(statement)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def open_state_db(home: Path) -> sqlite3.Connection | None:
    """The state DB, or None when the home has none (START-02: the pipeline must not create it)."""
    path = home / STATE_DB
    if not path.is_file():
        return None
    con = connect(path)
    if not _has_table(con, "threads"):
        con.close()
        raise StoreError(f"{path}: no `threads` table; not a Codex state database")
    return con


def open_memories_db(home: Path) -> sqlite3.Connection:
    """The memories DB, created with Codex's schema on first use."""
    path = home / MEMORIES_DB
    try:
        con = connect(path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: {exc}") from exc
    try:
        ensure_schema(con, "memories_1", "stage1_outputs")
    except (sqlite3.DatabaseError, StoreError) as exc:
        con.close()
        raise StoreError(f"{path}: {exc}") from exc
    return con

"""The SQLite files of a Codex home, in Codex's on-disk schema (DM-01..DM-03): the state DB, and
the memories DB of the layout in use (LAYOUT-01), migrated to the release's schema."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memconform.resources import codex_schema_statements, progress_migration_statements
from memref.layout import V1, Layout

if TYPE_CHECKING:
    from memref.config import CodexConfig

STATE_DB = "state_5.sqlite"
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


def ensure_progress_table(con: sqlite3.Connection) -> None:
    """Migration 2 of the memories DB (P2-PROG-01): `consolidation_progress` with its one row,
    added in place to a DB of the 0.144.6 schema."""
    con.execute("BEGIN IMMEDIATE")
    try:
        if not _has_table(con, "consolidation_progress"):
            for statement in progress_migration_statements():
                con.execute(statement)
        con.execute("INSERT OR IGNORE INTO consolidation_progress (singleton) VALUES (1)")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def open_memories_db(home: Path, layout: Layout = V1, progress: bool = False
                     ) -> sqlite3.Connection:
    """The layout's memories DB, created with Codex's schema on first use; with `progress`
    (releases from 0.155.0), migrated to include `consolidation_progress`."""
    path = layout.db(home)
    try:
        con = connect(path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: {exc}") from exc
    try:
        ensure_schema(con, "memories_1", "stage1_outputs")
        if progress:
            ensure_progress_table(con)
    except (sqlite3.DatabaseError, StoreError) as exc:
        con.close()
        raise StoreError(f"{path}: {exc}") from exc
    return con


def memories_db(home: Path, config: CodexConfig) -> sqlite3.Connection:
    """The memories DB of the config's layout, in its release's schema."""
    return open_memories_db(home, config.layout, config.release.consolidation_progress)

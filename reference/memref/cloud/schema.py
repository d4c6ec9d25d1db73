"""Tables of the cloud control plane (SQLAlchemy Core), on SQLite or PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Engine,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
)

metadata = MetaData()

users = Table(
    "users", metadata,
    Column("id", String(64), primary_key=True),
    Column("token", String(128), nullable=False, unique=True),
)

projects = Table(
    "projects", metadata,
    Column("id", String(64), primary_key=True),
)

members = Table(
    "project_members", metadata,
    Column("project_id", String(64), ForeignKey("projects.id"), primary_key=True),
    Column("user_id", String(64), ForeignKey("users.id"), primary_key=True),
    Column("can_create_tasks", Boolean, nullable=False),
)

tasks = Table(
    "tasks", metadata,
    Column("id", String(64), primary_key=True),
    Column("project_id", String(64), ForeignKey("projects.id"), nullable=False),
    Column("user_id", String(64), ForeignKey("users.id"), nullable=False),
    Column("kind", String(16), nullable=False),  # "task" or "coordinator"
    Column("status", String(16), nullable=False),
    Column("goal", Text, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("started_at", BigInteger),
    Column("finished_at", BigInteger),
    Column("parent_task_id", String(64)),
    Column("followup_messages", Integer, nullable=False),
)

task_flags = Table(
    "task_memory_flags", metadata,
    Column("task_id", String(64), ForeignKey("tasks.id"), primary_key=True),
    Column("use_memories", Boolean),
    Column("generate_memories", Boolean),
)

settings = Table(
    "auto_memory_settings", metadata,
    Column("user_id", String(64), ForeignKey("users.id"), primary_key=True),
    Column("generate_memories", Boolean, nullable=False),
    Column("use_memories", Boolean, nullable=False),
    Column("disable_on_external_context", Boolean, nullable=False),
    Column("min_rate_limit_remaining_percent", Integer, nullable=False),
    Column("idle_seconds", Integer, nullable=False),
    Column("min_duration_seconds", Integer, nullable=False),
    Column("min_result_chars", Integer, nullable=False),
    Column("extract_model", String(200)),
    Column("consolidation_model", String(200)),
)

quotas = Table(
    "monthly_quotas", metadata,
    Column("user_id", String(64), ForeignKey("users.id"), primary_key=True),
    Column("month", String(7), primary_key=True),  # YYYY-MM
    Column("limit_units", BigInteger),  # NULL: unlimited
    Column("used_units", BigInteger, nullable=False),
)

memories = Table(
    "memories", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(8), nullable=False),  # "project" or "user"
    Column("project_id", String(64)),
    Column("user_id", String(64)),
    Column("source_task_id", String(64), unique=True),
    Column("goal_key", Text),
    Column("source_finished_at", BigInteger),
    Column("content", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("superseded", Boolean, nullable=False),
)
Index("ix_memories_goal", memories.c.project_id, memories.c.goal_key)

extraction_log = Table(
    "auto_memory_log", metadata,
    Column("user_id", String(64), ForeignKey("users.id"), primary_key=True),
    Column("task_id", String(64), primary_key=True),
    Column("outcome", String(16), nullable=False),  # "extracted" or "skipped"
    Column("reason", String(32)),
    Column("at", BigInteger, nullable=False),
)

audit_events = Table(
    "audit_events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", String(64), nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("detail", Text, nullable=False),
    Column("at", BigInteger, nullable=False),
)

# Requests run their database work in the thread pool of the server (anyio's default limiter,
# set to REQUEST_THREADS at startup); each holds at most one connection at a time, so the pool
# covers every request thread, the worker loop and a few spares: a request never waits for a
# connection another request holds while waiting for a thread.
REQUEST_THREADS = 40
POOL_SIZE = REQUEST_THREADS + 4
POOL_OVERFLOW = 8
POOL_TIMEOUT_S = 30
SQLITE_BUSY_TIMEOUT_MS = 30_000
# an execution option: the connection's transactions write (SQLite: BEGIN IMMEDIATE, so two
# writers queue on the busy timeout instead of failing when a reader upgrades)
WRITE = "memref_write"


def engine_for(url: str) -> Engine:
    """An engine with the schema created. SQLite gets foreign keys, WAL, a busy timeout, and
    transactions begun by SQLAlchemy (BEGIN IMMEDIATE on connections marked WRITE)."""
    engine = create_engine(url, pool_pre_ping=True, pool_size=POOL_SIZE,
                           max_overflow=POOL_OVERFLOW, pool_timeout=POOL_TIMEOUT_S)
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi: Any, _record: object) -> None:
            dbapi.isolation_level = None  # SQLAlchemy emits BEGIN (below); sqlite3 commits
            cursor = dbapi.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(con: Connection) -> None:
            immediate = con.get_execution_options().get(WRITE)
            con.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
    metadata.create_all(engine)
    return engine

"""Transactions that survive concurrency: writes retried when the database says another
transaction got in the way (SQLite busy, PostgreSQL deadlock or serialization failure), inserts
that tolerate the row already being there, and text the database can store on every backend."""

from __future__ import annotations

import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, OperationalError

from memref.cloud.schema import WRITE

T = TypeVar("T")
ATTEMPTS = 6
BACKOFF_S = 0.02
# PostgreSQL: serialization_failure, deadlock_detected, lock_not_available
RETRY_SQLSTATES = {"40001", "40P01", "55P03"}
TEXT_MESSAGE = "text must be valid Unicode without NUL characters"


class FairLock:
    """A first-come, first-served lock: SQLite has one writer at a time, and its busy handler
    polls, so a writer that commits and begins again at once (a sweep, task after task) would
    starve the others; in this process they take turns in arrival order instead."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._next = self._serving = 0

    def __enter__(self) -> None:
        with self._turns:
            ticket, self._next = self._next, self._next + 1
            while ticket != self._serving:
                self._turns.wait()

    def __exit__(self, *_exc: object) -> None:
        with self._turns:
            self._serving += 1
            self._turns.notify_all()


_WRITERS: weakref.WeakKeyDictionary[Engine, FairLock] = weakref.WeakKeyDictionary()
_WRITERS_LOCK = threading.Lock()


def serialized(engine: Engine) -> FairLock | nullcontext[None]:
    """Held around a write transaction: SQLite writers of this process take turns
    (PostgreSQL locks rows instead)."""
    if engine.dialect.name != "sqlite":
        return nullcontext()
    with _WRITERS_LOCK:
        return _WRITERS.setdefault(engine, FairLock())


class Busy(RuntimeError):
    """A write kept colliding with other transactions: the caller may retry later (429)."""


def retryable(exc: BaseException) -> bool:
    """A collision with another transaction, not a fault of the request."""
    if not isinstance(exc, DBAPIError) or exc.connection_invalidated:
        return False
    if getattr(exc.orig, "sqlstate", None) in RETRY_SQLSTATES:
        return True
    text = str(exc.orig).lower()
    return isinstance(exc, OperationalError) and ("database is locked" in text
                                                  or "database is busy" in text)


def conflicting(exc: BaseException) -> bool:
    """A duplicate key or a reference to a row that does not exist: the request conflicts with
    what is stored (409). A NOT NULL or CHECK failure is not one: it means a value got past
    validation, a fault of the service."""
    orig = getattr(exc, "orig", None)
    if getattr(orig, "sqlstate", None) in ("23505", "23503"):
        return True
    return getattr(orig, "sqlite_errorname", None) in (
        "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_FOREIGNKEY")


def pause(attempt: int) -> None:
    time.sleep(BACKOFF_S * (2 ** attempt) * (0.5 + random.random()))


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as con, con.begin():
        yield con


def writer(engine: Engine) -> Connection:
    """A connection whose transactions write (BEGIN IMMEDIATE on SQLite); the caller closes
    it."""
    return engine.connect().execution_options(**{WRITE: True})


def write(engine: Engine, work: Callable[[Connection], T]) -> T:
    """`work` in one write transaction, run again from the start when it collided with
    another transaction; Busy when it kept colliding."""
    for attempt in range(ATTEMPTS):
        with serialized(engine), writer(engine) as con:
            try:
                with con.begin():
                    return work(con)
            except DBAPIError as exc:
                if not retryable(exc):
                    raise
        pause(attempt)
    raise Busy("the database stayed busy with other changes")


def retry_on(con: Connection, work: Callable[[], T]) -> T:
    """`work` on `con` (outside a transaction; `work` commits or rolls back), rolled back and
    run again when it collided with another transaction."""
    for attempt in range(ATTEMPTS):
        with serialized(con.engine):
            try:
                return work()
            except BaseException as exc:
                con.rollback()
                if not (isinstance(exc, DBAPIError) and retryable(exc)):
                    raise
        pause(attempt)
    raise Busy("the database stayed busy with other changes")


def insert_or_ignore(con: Connection, table: Table, keys: list[str], **values: Any) -> None:
    """Insert the row unless a row with the same `keys` exists (or is being inserted)."""
    dialect = postgresql if con.dialect.name == "postgresql" else sqlite
    con.execute(dialect.insert(table).values(**values).on_conflict_do_nothing(
        index_elements=keys))


def upsert(con: Connection, table: Table, keys: list[str], **values: Any) -> None:
    """Insert the row, or update the row with the same `keys` to `values`."""
    dialect = postgresql if con.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(table).values(**values)
    con.execute(statement.on_conflict_do_update(
        index_elements=keys, set_={k: v for k, v in values.items() if k not in keys}))


def storable(text: str) -> bool:
    """Text every backend stores unchanged: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(text: str) -> str:
    """A pydantic validator: refuse what `storable` refuses (CLOUD-SET-03)."""
    if not storable(text):
        raise ValueError(TEXT_MESSAGE)
    return text


def printable(text: str, limit: int = 200) -> str:
    """`text` safe to put in a JSON response (lone surrogates escaped), cut to `limit`."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe if len(safe) <= limit else f"{safe[:limit]}…"

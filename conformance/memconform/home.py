"""Build Codex homes on disk: `config.toml`, `state_5.sqlite`, rollouts, and the memories DB
of the home's layout (v1: `memories_1.sqlite` and `memories/`; v2: `memories_v2_1.sqlite` and
`memories_v2/`, the same schema).

Every file is in Codex 0.144.6's format (the SQLite files are created from the schema dumped
from the real binary), so the reference and the real binary both accept what this writes. All
timestamps are relative to the `now_ms` of the check's clock.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import random
import sqlite3
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from memconform.resources import codex_schema_statements, progress_migration_statements
from memconform.rollout import conversation, rollout_file_name, session_meta, stamp

MOCK_PROVIDER = "mock"
MOCK_KEY_ENV = "MEMCONFORM_MOCK_API_KEY"
MOCK_KEY = "memconform-mock-key"
SANDBOX_POLICY = json.dumps({"type": "read-only"})
HOUR_MS = 3_600_000
# memory layout -> (memory root folder, memories DB file); the DB schema is the same
LAYOUT_PATHS = {"v1": ("memories", "memories_1.sqlite"),
                "v2": ("memories_v2", "memories_v2_1.sqlite")}


@dataclass(frozen=True)
class Thread:
    id: str
    rollout_path: Path
    updated_at_ms: int
    cwd: str


def create_db(path: Path, db: str) -> None:
    """Create `path` with Codex's schema and migration rows. Refuses an existing file, and
    leftover `-wal`/`-journal` files, which SQLite would replay onto the new one."""
    for suffix in ("-wal", "-journal"):
        stale = path.with_name(path.name + suffix)
        if stale.exists():
            raise FileExistsError(f"{stale} is left over from an earlier database; remove it "
                                  f"before creating {path.name}")
    try:
        with path.open("xb") as file:
            file.write(_empty_db(db))
    except FileExistsError:
        raise FileExistsError(
            f"{path} already exists; the home builder never overwrites a DB") from None


@functools.cache
def _empty_db(db: str) -> bytes:
    """The bytes of a fresh WAL-mode file with the schema, built once per process."""
    with tempfile.TemporaryDirectory(prefix="memconform-schema-") as scratch:
        template = Path(scratch) / f"{db}.sqlite"
        con = sqlite3.connect(template, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("BEGIN IMMEDIATE")
            for statement in codex_schema_statements(db):
                con.execute(statement)
            con.execute("COMMIT")
        finally:
            con.close()  # the last close checkpoints the WAL into the file
        return template.read_bytes()


def uuid7(rng: random.Random, at_ms: int) -> str:
    """A UUID v7 whose time is `at_ms`, its random bits from `rng`."""
    value = (at_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64
    return str(uuid.UUID(int=value | 0b10 << 62 | rng.getrandbits(62)))


def _jwt(claims: dict[str, Any]) -> str:
    """An unsigned JSON Web Token (`alg: none`) carrying `claims`."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.bWVtY29uZm9ybQ"


def thread_row(tid: str, rollout_path: str, cwd: str, created_ms: int, updated_ms: int, *,
               source: str = "cli", archived: bool = False, preview: str | None = None,
               memory_mode: str = "enabled", history_mode: str = "legacy",
               git_branch: str | None = None, user_text: str = "hello") -> dict[str, Any]:
    """A `threads` row as Codex 0.144.6 writes it."""
    return {
        "id": tid, "rollout_path": rollout_path, "created_at": created_ms // 1000,
        "updated_at": updated_ms // 1000, "source": source, "model_provider": MOCK_PROVIDER,
        "cwd": cwd, "title": user_text[:80], "sandbox_policy": SANDBOX_POLICY,
        "approval_mode": "never", "tokens_used": 15, "has_user_event": 0,
        "archived": int(archived), "archived_at": updated_ms // 1000 if archived else None,
        "git_branch": git_branch, "cli_version": "0.144.6", "first_user_message": user_text,
        "memory_mode": memory_mode, "model": "gpt-test", "created_at_ms": created_ms,
        "updated_at_ms": updated_ms, "thread_source": "user",
        "preview": user_text if preview is None else preview,
        "recency_at": updated_ms // 1000, "recency_at_ms": updated_ms,
        "history_mode": history_mode,
    }


def writer(db: Path) -> sqlite3.Connection:
    """A connection for the builder's writes. A home under construction needs no durability
    against power loss, so SQLite skips its fsyncs (a quarter of the time per write)."""
    con = sqlite3.connect(db, timeout=30)
    con.execute("PRAGMA synchronous=OFF")
    return con


BULK_ROWS = 100


def insert_rows(db: Path, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert rows sharing one set of columns, in one transaction.

    The `threads` table's three AFTER INSERT triggers only fill a row's `created_at_ms`,
    `updated_at_ms` or `recency_at_ms` left empty (NULL, NULL, 0); checking their conditions
    costs three times the insert itself. A bulk insert of rows that fill all three drops them
    and creates them again in the same transaction: the same rows, the same triggers after."""
    if not rows:
        return
    columns = ", ".join(rows[0])
    marks = ", ".join("?" for _ in rows[0])
    con = writer(db)
    con.isolation_level = None
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            triggers = _idle_insert_triggers(con, table, rows)
            for name, _ in triggers:
                con.execute(f'DROP TRIGGER "{name}"')
            con.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                            [tuple(r.values()) for r in rows])
            for _, sql in triggers:
                con.execute(sql)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.close()


def _idle_insert_triggers(con: sqlite3.Connection, table: str,
                          rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The `threads` insert triggers when none would change a row of this bulk insert."""
    if table != "threads" or len(rows) < BULK_ROWS or not all(
            r.get("created_at_ms") is not None and r.get("updated_at_ms") is not None
            and r.get("recency_at_ms") not in (None, 0) for r in rows):
        return []
    found = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND "
                        "tbl_name = 'threads' AND sql LIKE '%AFTER INSERT ON threads%'")
    triggers = [(name, sql) for name, sql in found]
    known = {"threads_created_at_ms_after_insert", "threads_updated_at_ms_after_insert",
             "threads_recency_at_after_insert"}
    return triggers if {name for name, _ in triggers} == known else []


class CodexHome:
    """A Codex home under construction. `now_ms` anchors every relative timestamp; `layout` is
    the memory layout the implementation under test uses (where its memories live)."""

    def __init__(self, path: Path, *, now_ms: int, model_base_url: str, seed: int = 0,
                 layout: str = "v1") -> None:
        if layout not in LAYOUT_PATHS:
            raise ValueError(f"memory layout {layout!r} is not one of {', '.join(LAYOUT_PATHS)}")
        self.path = path
        self.layout = layout
        self.now_ms = now_ms
        self.model_base_url = model_base_url
        self._rng = random.Random(seed)
        self.work_dir = path.parent / f"{path.name}-work"
        path.mkdir(parents=True, exist_ok=True)
        self.work_dir.mkdir(parents=True, exist_ok=True)

    @property
    def state_db(self) -> Path:
        return self.path / "state_5.sqlite"

    @property
    def memories_db(self) -> Path:
        return self.path / LAYOUT_PATHS[self.layout][1]

    @property
    def memory_root(self) -> Path:
        return self.path / LAYOUT_PATHS[self.layout][0]

    @property
    def env(self) -> dict[str, str]:
        """Environment a session on this home needs (the mock provider's key)."""
        return {MOCK_KEY_ENV: MOCK_KEY}

    def uuid7(self, at_ms: int) -> str:
        return uuid7(self._rng, at_ms)

    # -- config.toml -------------------------------------------------------------------------

    def write_config(self, *, feature: bool | None = True,
                     memories: dict[str, Any] | None = None,
                     top: dict[str, Any] | None = None,
                     provider: dict[str, Any] | None = None) -> Path:
        """Point the home at the mock model; `memories` are raw `[memories]` values;
        `feature=None` leaves `[features] memories` out entirely."""
        data: dict[str, Any] = {
            "model": "gpt-test",
            "model_provider": MOCK_PROVIDER,
            **(top or {}),
            "model_providers": {MOCK_PROVIDER: {
                "name": MOCK_PROVIDER, "base_url": self.model_base_url, "wire_api": "responses",
                "env_key": MOCK_KEY_ENV, "request_max_retries": 0, "stream_max_retries": 0,
                **(provider or {})}},
            "features": {} if feature is None else {"memories": feature},
            "memories": dict(memories or {}),
        }
        path = self.path / "config.toml"
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
        return path

    def write_chatgpt_login(self, account_id: str = "acct-memconform") -> Path:
        """An `auth.json` as a ChatGPT login leaves it: well-formed JWTs, unsigned, that never
        expire, and a last refresh in the future so that no client tries to refresh them."""
        claims = {"email": "memconform@example.invalid", "exp": 4_102_444_800,
                  "https://api.openai.com/auth": {"chatgpt_plan_type": "plus",
                                                  "chatgpt_account_id": account_id,
                                                  "chatgpt_user_id": "user-memconform"}}
        path = self.path / "auth.json"
        path.write_text(json.dumps({"OPENAI_API_KEY": None, "tokens": {
            "id_token": _jwt(claims), "access_token": _jwt({**claims, "sub": "user-memconform"}),
            "refresh_token": "memconform-refresh-token", "account_id": account_id},
            "last_refresh": "2099-01-01T00:00:00Z"}), encoding="utf-8")
        return path

    def write_raw_config(self, text: str) -> Path:
        path = self.path / "config.toml"
        path.write_text(text, encoding="utf-8")
        return path

    # -- state_5.sqlite ----------------------------------------------------------------------

    def ensure_state_db(self) -> Path:
        """Create the state DB as a binary that already ran once leaves it: with the
        rollout backfill marked complete, so Codex does not re-derive `threads` rows from
        the rollout files (which would reset their timestamps)."""
        if not self.state_db.exists():
            create_db(self.state_db, "state_5")
            insert_rows(self.state_db, "backfill_state", [{
                "id": 1, "status": "complete", "last_watermark": None,
                "last_success_at": self.now_ms // 1000, "updated_at": self.now_ms // 1000}])
        return self.state_db

    def add_thread(self, **spec: Any) -> Thread:
        """Write one rollout file and its `threads` row (see `_build_thread` for the options)."""
        row, thread = self._build_thread(**spec)
        insert_rows(self.ensure_state_db(), "threads", [row])
        return thread

    def add_threads(self, count: int, *, stagger_ms: int = 0, **spec: Any) -> list[Thread]:
        """`count` threads with the same options, inserted in one transaction; with
        `stagger_ms`, thread i was updated (and created) i * stagger_ms later than the first."""
        ago = spec.pop("updated_ago_ms", 2 * HOUR_MS)
        built = [self._build_thread(updated_ago_ms=ago - i * stagger_ms, **spec)
                 for i in range(count)]
        insert_rows(self.ensure_state_db(), "threads", [row for row, _ in built])
        return [thread for _, thread in built]

    def _build_thread(self, *, updated_ago_ms: int = 2 * HOUR_MS, thread_id: str | None = None,
                   source: str = "cli", archived: bool = False, preview: str | None = None,
                   memory_mode: str = "enabled", history_mode: str = "legacy",
                   git_branch: str | None = None, lines: list[dict[str, Any]] | None = None,
                   user_text: str = "Remember that my favourite colour is teal.",
                   assistant_text: str = "Noted: your favourite colour is teal.",
                   meta_extra: dict[str, Any] | None = None
                      ) -> tuple[dict[str, Any], Thread]:
        """A rollout file on disk and its `threads` row; the thread was last updated
        `updated_ago_ms` before now and created one minute earlier."""
        updated_ms = self.now_ms - updated_ago_ms
        created_ms = updated_ms - 60_000
        tid = thread_id or self.uuid7(created_ms)
        cwd = str(self.work_dir)
        body = lines if lines is not None else conversation(user_text, assistant_text)
        day = rollout_file_name(tid, created_ms)[8:18].split("-")
        rollout = self.path / "sessions" / day[0] / day[1] / day[2] / \
            rollout_file_name(tid, created_ms)
        rollout.parent.mkdir(parents=True, exist_ok=True)
        meta = session_meta(tid, created_ms, cwd, source)
        meta["payload"].update(meta_extra or {})
        entries = stamp([meta, *body], created_ms)
        rollout.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
        os.utime(rollout, (updated_ms / 1000, updated_ms / 1000))
        row = thread_row(tid, str(rollout), cwd, created_ms, updated_ms, source=source,
                         archived=archived, preview=preview, memory_mode=memory_mode,
                         history_mode=history_mode, git_branch=git_branch, user_text=user_text)
        return row, Thread(tid, rollout, updated_ms, cwd)

    # -- the memories DB ---------------------------------------------------------------------

    def ensure_memories_db(self) -> Path:
        if not self.memories_db.exists():
            create_db(self.memories_db, "memories_1")  # memories_v2_1 has the same schema
        return self.memories_db

    def set_consolidation_progress(self, max_thread_count: int) -> None:
        """Migrate the memories DB as Codex 0.155.0 does (migration 2: the one-row
        `consolidation_progress` table) and set its count."""
        db = self.ensure_memories_db()
        con = writer(db)
        try:
            with con:
                if not con.execute("SELECT 1 FROM sqlite_master WHERE name = "
                                   "'consolidation_progress'").fetchone():
                    for statement in progress_migration_statements():
                        con.execute(statement)
                con.execute("INSERT OR REPLACE INTO consolidation_progress (singleton, "
                            "max_thread_count) VALUES (1, ?)", (max_thread_count,))
        finally:
            con.close()

    def add_stage1_output(self, thread_id: str, **columns: Any) -> None:
        self.add_stage1_outputs([{"thread_id": thread_id, **columns}])

    def add_stage1_outputs(self, rows: list[dict[str, Any]]) -> None:
        """Insert rows in one transaction; each needs `thread_id`, `raw_memory`,
        `rollout_summary` and `source_updated_at`."""
        insert_rows(self.ensure_memories_db(), "stage1_outputs",
                     [self._output_row(**row) for row in rows])

    def _output_row(self, thread_id: str, *, raw_memory: str, rollout_summary: str,
                    rollout_slug: str | None = None, source_updated_at: int,
                    generated_at: int | None = None, usage_count: int | None = None,
                    last_usage: int | None = None, selected_for_phase2: int = 0,
                    selected_for_phase2_source_updated_at: int | None = None
                    ) -> dict[str, Any]:
        return {
            "thread_id": thread_id, "source_updated_at": source_updated_at,
            "raw_memory": raw_memory, "rollout_summary": rollout_summary,
            "rollout_slug": rollout_slug,
            "generated_at": self.now_ms // 1000 if generated_at is None else generated_at,
            "usage_count": usage_count, "last_usage": last_usage,
            "selected_for_phase2": selected_for_phase2,
            "selected_for_phase2_source_updated_at": selected_for_phase2_source_updated_at,
        }

    def execute(self, db: Path, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One write statement in its own transaction; the number of rows it changed."""
        con = writer(db)
        try:
            with con:
                return con.execute(sql, params).rowcount
        finally:
            con.close()

    def update_stage1_output(self, thread_id: str, **columns: Any) -> None:
        """Change columns of one existing `stage1_outputs` row."""
        sets = ", ".join(f"{name} = ?" for name in columns)
        changed = self.execute(self.memories_db, f"UPDATE stage1_outputs SET {sets} WHERE "
                               "thread_id = ?", (*columns.values(), thread_id))
        if changed != 1:
            raise KeyError(f"no stage1_outputs row for thread {thread_id}")

    def add_job(self, kind: str, job_key: str, *, status: str, retry_remaining: int = 3,
                **columns: Any) -> None:
        insert_rows(self.ensure_memories_db(), "jobs", [{
            "kind": kind, "job_key": job_key, "status": status,
            "retry_remaining": retry_remaining, **columns}])

    # -- reading back ------------------------------------------------------------------------

    def query(self, db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if not db.exists():
            return []
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute(sql, params)]
        finally:
            con.close()

"""The Codex-home builder writes what Codex 0.144.6 itself writes, and the binary accepts it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from memconform import mockmodel as mm
from memconform.home import HOUR_MS, CodexHome, create_db
from memconform.resources import codex_schema_statements
from memconform.snapshots import Masker, tree

NOW_MS = 1_780_315_200_000
CODEX_BIN_ENV = "MEMCONFORM_CODEX_BIN"


def schema_of(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        return sorted(con.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        con.close()


@pytest.fixture
def home(tmp_path: Path) -> CodexHome:
    return CodexHome(tmp_path / "home", now_ms=NOW_MS, model_base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize("db", ["state_5", "memories_1"])
def test_databases_carry_the_dumped_schema_and_migration_rows(home: CodexHome, db: str) -> None:
    path = home.ensure_state_db() if db == "state_5" else home.ensure_memories_db()
    reference = sqlite3.connect(":memory:")
    for statement in codex_schema_statements(db):
        reference.execute(statement)
    expected = sorted(reference.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    assert schema_of(path) == expected
    migrations = sqlite3.connect(path).execute("SELECT count(*) FROM _sqlx_migrations")
    assert migrations.fetchone()[0] == (40 if db == "state_5" else 1)


def test_thread_row_and_rollout_are_relative_to_now(home: CodexHome) -> None:
    thread = home.add_thread(updated_ago_ms=3 * HOUR_MS, git_branch="main")
    [row] = home.query(home.state_db, "SELECT * FROM threads")
    assert row["updated_at_ms"] == NOW_MS - 3 * HOUR_MS
    assert row["updated_at"] == (NOW_MS - 3 * HOUR_MS) // 1000
    assert row["source"] == "cli" and row["memory_mode"] == "enabled"
    assert row["history_mode"] == "legacy" and row["git_branch"] == "main"
    assert row["preview"] and row["archived"] == 0
    assert uuid.UUID(thread.id).version == 7
    assert Path(row["rollout_path"]) == thread.rollout_path
    lines = [json.loads(x) for x in thread.rollout_path.read_text().splitlines()]
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == thread.id
    assert [line["payload"]["role"] for line in lines[1:]] == ["user", "assistant"]


def test_builder_never_overwrites_a_database(home: CodexHome) -> None:
    home.ensure_memories_db()
    home.add_stage1_output("t", raw_memory="r", rollout_summary="s", source_updated_at=1)
    with pytest.raises(FileExistsError):
        create_db(home.memories_db, "memories_1")
    assert home.query(home.memories_db, "SELECT thread_id FROM stage1_outputs") == \
        [{"thread_id": "t"}]


def test_builder_refuses_a_stale_write_ahead_log(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    con = sqlite3.connect(old, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE threads (id TEXT)")
    wal = old.with_name("old.sqlite-wal").read_bytes()
    con.close()
    target = tmp_path / "state_5.sqlite"
    (tmp_path / "state_5.sqlite-wal").write_bytes(wal)
    with pytest.raises(FileExistsError, match=r"state_5\.sqlite-wal is left over"):
        create_db(target, "state_5")
    assert not target.exists()


def test_config_toml_shape(home: CodexHome, snapshot: SnapshotAssertion) -> None:
    home.write_config(memories={"min_rollout_idle_hours": 1, "max_rollouts_per_startup": 10})
    assert (home.path / "config.toml").read_text() == snapshot
    home.write_config(feature=None)
    written = tomllib.loads((home.path / "config.toml").read_text())
    assert "memories" not in written.get("features", {})
    assert written["model_providers"]["mock"]["base_url"] == home.model_base_url


# -- the real binary -------------------------------------------------------------------------


def codex_binary() -> Path | None:
    configured = os.environ.get(CODEX_BIN_ENV)
    return Path(configured) if configured else None


@pytest.fixture
def codex_bin() -> Path:
    binary = codex_binary()
    if binary is None or not binary.is_file():
        pytest.skip(f"set {CODEX_BIN_ENV} to the Codex 0.144.6 binary (tox and .ci/run do)")
    return binary


@pytest.fixture
def codex_dir() -> Iterator[Path]:
    """Codex refuses helper aliases under /tmp, so its homes live in the user's cache."""
    base = Path(os.environ.get("MEMCONFORM_CODEX_WORKDIR",
                               Path.home() / ".cache" / "memconform" / "work"))
    path = base / uuid.uuid4().hex
    path.mkdir(parents=True)
    yield path
    if not os.environ.get("MEMCONFORM_KEEP"):
        shutil.rmtree(path, ignore_errors=True)


def test_real_codex_extracts_a_thread_the_builder_wrote(codex_bin: Path, codex_dir: Path) -> None:
    server = mm.start_server()
    try:
        mock = mm.MockModel(server)
        now_ms = int(time.time() * 1000)
        home = CodexHome(codex_dir / "home", now_ms=now_ms, model_base_url=mock.base_url)
        home.write_config(memories={"min_rollout_idle_hours": 1})
        thread = home.add_thread(updated_ago_ms=2 * HOUR_MS,
                                 user_text="The deploy key lives in vault path ops/deploy.")
        gate = mm.Gate(timeout_s=15)
        mock.on("main", mm.message("ok").held(gate))
        mock.on("stage1", mm.json_output({"raw_memory": "", "rollout_summary": "",
                                          "rollout_slug": None}))
        proc = subprocess.Popen(
            [str(codex_bin), "exec", "--skip-git-repo-check", "hello"],
            cwd=home.work_dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
            env={**os.environ, "CODEX_HOME": str(home.path), **home.env})
        deadline = time.monotonic() + 60
        while not mock.of_kind("stage1") and time.monotonic() < deadline \
                and proc.poll() is None:
            time.sleep(0.1)
        gate.release()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-2000:]
        [stage1] = mock.of_kind("stage1")
        assert "ops/deploy" in stage1.text, "the binary did not read the builder's rollout"
        assert str(thread.rollout_path) in stage1.text
        migrations = home.query(home.state_db, "SELECT count(*) AS n FROM _sqlx_migrations")
        assert migrations == [{"n": 40}], "the binary re-ran or added migrations"
    finally:
        server.clear()
        server.stop()


def test_built_home_tree(home: CodexHome, snapshot: SnapshotAssertion) -> None:
    home.write_config(memories={"min_rollout_idle_hours": 1})
    first = home.add_thread(updated_ago_ms=3 * HOUR_MS)
    home.add_thread(updated_ago_ms=5 * HOUR_MS, user_text=f"see thread {first.id}")
    assert tree(home.path) == snapshot


def test_masker_keeps_equal_ids_equal() -> None:
    masker = Masker()
    one, two = str(uuid.uuid4()), str(uuid.uuid4())
    text = f"{one} {two} {one.upper()} at 2026-06-01T12:00:00.000Z or 1780315200123"
    assert masker.text(text) == "<uuid-1> <uuid-2> <uuid-1> at <time> or <time>"
    assert Masker({"/a/b": "<b>", "/a": "<a>"}).text("/a/b/c /a/x") == "<b>/c <a>/x"


def test_bulk_threads_keep_the_schema_and_its_triggers(home: CodexHome) -> None:
    """A bulk insert of threads drops the idle insert triggers only for its own transaction:
    the schema is the same after it, the rows are the ones asked for, and the triggers work on
    rows that leave their `*_ms` columns empty."""
    db = home.ensure_state_db()
    before = schema_of(db)
    threads = home.add_threads(150, stagger_ms=1_000)
    assert schema_of(db) == before
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT id, updated_at_ms, recency_at_ms FROM threads ORDER BY "
                           "updated_at_ms").fetchall()
        assert [(t.id, t.updated_at_ms, t.updated_at_ms) for t in threads] == rows
        con.execute("INSERT INTO threads (id, rollout_path, created_at, updated_at, source, "
                    "model_provider, cwd, title, sandbox_policy, approval_mode) VALUES "
                    "('t-empty-ms', '/r', 100, 200, 'cli', 'p', '/', 't', 's', 'never')")
        filled = con.execute("SELECT created_at_ms, updated_at_ms, recency_at_ms FROM threads "
                             "WHERE id = 't-empty-ms'").fetchone()
        assert filled == (100_000, 200_000, 200_000)
    finally:
        con.close()

"""Reference internals the checks cannot reach directly: errors, stores and the model client."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from conftest import run_memref
from memconform.home import create_db
from memref import store
from memref.config import ConfigError, load_config, parse_config
from memref.layout import V1
from memref.runtime import Runtime


def test_missing_config_gives_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.feature_memories is False
    assert config.memories.min_rollout_idle_hours == 6
    assert config.extract_model == "gpt-5.4-mini"


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[memories\n")
    with pytest.raises(ConfigError, match=r"config\.toml: not valid TOML"):
        load_config(tmp_path)


@pytest.mark.parametrize(("data", "message"), [
    ({"features": {"memories": "yes"}}, "features.memories must be a boolean"),
    ({"memories": 3}, r"\[memories\] must be a table"),
    ({"model_provider": "x"}, "has no \\[model_providers.x\\] table"),
    ({"model_provider": "x", "model_providers": {"x": {}}}, "base_url"),
    ({"model_provider": "x", "model_providers": {"x": {"base_url": "http://h",
                                                       "wire_api": "chat"}}}, "unsupported"),
])
def test_config_errors_name_the_problem(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_runtime_ids_are_seeded_and_v7_carries_now() -> None:
    a, b = Runtime(now_ms=1_780_315_200_123, seed=4), Runtime(now_ms=1_780_315_200_123, seed=4)
    assert [a.uuid4(), a.uuid7()] == [b.uuid4(), b.uuid7()]
    v7 = Runtime(now_ms=1_780_315_200_123).uuid7()
    assert int(v7.replace("-", "")[:12], 16) == 1_780_315_200_123
    assert v7[14] == "7"


def test_state_db_is_never_created(tmp_path: Path) -> None:
    assert store.open_state_db(tmp_path) is None
    assert not (tmp_path / store.STATE_DB).exists()
    (tmp_path / store.STATE_DB).write_bytes(b"")
    with pytest.raises(store.StoreError, match="not a Codex state database"):
        store.open_state_db(tmp_path)


def test_corrupt_memories_db_is_reported_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / V1.db_file
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(store.StoreError, match=r"memories_1\.sqlite"):
        store.open_memories_db(tmp_path)
    assert path.read_bytes() == b"this is not sqlite" * 100


def _open(home: str) -> None:
    store.open_memories_db(Path(home)).close()


def test_concurrent_first_opens_create_the_schema_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        pool.map(_open, [str(tmp_path)] * 8, chunksize=1)
    con = sqlite3.connect(tmp_path / V1.db_file)
    assert con.execute("SELECT count(*) FROM _sqlx_migrations").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'jobs'").fetchone() \
        == (1,)


def test_memref_startup_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run(*args: str) -> tuple[object, str]:
        code, out, err = run_memref(capsys, "startup", *args)
        return code, out + err

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[features]\nmemories = true\n")
    code, output = run("--home", str(home))
    assert code == 0 and "skipped: no_state_db" in output
    store.connect(home / store.STATE_DB).execute("CREATE TABLE threads (id TEXT)")
    code, output = run("--home", str(home))
    assert code == 1 and "unusable Codex database" in output
    for stale in home.glob(store.STATE_DB + "*"):  # the DB and its -wal/-shm
        stale.unlink()
    create_db(home / store.STATE_DB, "state_5")
    code, output = run("--home", str(home), "--now-ms", "1780315200000")
    assert code == 0 and "startup ran" in output
    assert "phase 1: 0 claimed" in output
    # no model provider: the first consolidation is claimed, its inputs synced, and it fails
    assert "phase 2: failed_spawn_agent" in output
    assert (home / "memories" / "extensions" / "ad_hoc" / "instructions.md").is_file()
    (home / "config.toml").write_text("[memories]\nmax_unused_days = 'x'\n")
    code, output = run("--home", str(home))
    assert code == 1 and "memories.max_unused_days" in output
    code, output = run("--home", str(tmp_path / "nope"))
    assert code == 2 and "no such directory" in output
    code, output = run("--home", str(home), "--now-ms", "soon")
    assert code == 2 and "--now-ms" in output and "invalid int value" in output

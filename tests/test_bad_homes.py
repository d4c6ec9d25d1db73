"""`memref startup` on broken homes: one line naming the path, a non-zero exit, nothing
changed on disk."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_memref
from memconform.clock import FIXED_EPOCH_MS
from memconform.home import HOUR_MS, CodexHome


def _no_config_dir(home: CodexHome) -> str:
    (home.path / "config.toml").unlink()
    (home.path / "config.toml").mkdir()
    return "config.toml: is a directory"


def _root_is_file(home: CodexHome) -> str:
    home.memory_root.write_text("not a folder")
    return "memories: the memory root is not a directory"


def _root_dangles(home: CodexHome) -> str:
    home.memory_root.symlink_to(home.path / "gone")
    return "memories: the memory root is a symlink to a missing target"


def _outputs_table_dropped(home: CodexHome) -> str:
    home.ensure_memories_db()
    with sqlite3.connect(home.memories_db) as conn:
        conn.execute("DROP TABLE stage1_outputs")
    return "table `stage1_outputs` is missing"


BREAKAGES: dict[str, Callable[[CodexHome], str]] = {
    "config-is-a-directory": _no_config_dir, "root-is-a-file": _root_is_file,
    "root-dangling-symlink": _root_dangles, "outputs-table-missing": _outputs_table_dropped}


def _entry(path: Path) -> bytes | str:
    if path.is_symlink():
        return f"-> {path.readlink()}"
    if path.suffix == ".sqlite":  # its content, wherever SQLite keeps it (file or WAL)
        with sqlite3.connect(path) as conn:
            return "\n".join(conn.iterdump())
    return path.read_bytes() if path.is_file() else "dir"


def _tree(path: Path, skip: str | None) -> dict[str, bytes | str]:
    return {str(p.relative_to(path)): _entry(p) for p in sorted(path.rglob("*"))
            if not p.name.endswith(("-wal", "-shm"))
            and not (skip and p.relative_to(path).parts[0] == skip)}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_home_is_one_line_and_unchanged(tmp_path: Path, breakage: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    home = CodexHome(tmp_path / "home", now_ms=FIXED_EPOCH_MS,
                     model_base_url="http://127.0.0.1:9/v1")
    home.write_config(memories={"min_rollout_idle_hours": 1})
    home.add_thread(updated_ago_ms=2 * HOUR_MS)
    expected = BREAKAGES[breakage](home)
    # the memory root and its seed come before the memories database in a startup's order
    skip = "memories" if breakage == "outputs-table-missing" else None
    before = _tree(home.path, skip)
    code, out, err = run_memref(capsys, "startup", "--home", str(home.path),
                                "--now-ms", str(FIXED_EPOCH_MS))
    output = out + err
    assert code == 1, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], output
    assert err.startswith("Error: "), "the message is not on stderr"
    assert str(home.path) in lines[0], "the message does not name the path"
    assert "Traceback" not in output
    assert _tree(home.path, skip) == before, "the failed startup changed the home"

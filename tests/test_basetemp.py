"""Where a run builds its homes: memory file system (Codex too), the user's cache for Codex
without one, pytest's default otherwise; a dead run's folder is removed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memconform import basetemp
from memconform.codex import binary


@pytest.fixture
def memory_fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for /dev/shm, listed as a tmpfs in a stand-in mounts file."""
    fs = tmp_path / "shm"
    fs.mkdir()
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/vda / ext4 rw 0 0\ntmpfs {fs} tmpfs rw,relatime 0 0\n")
    monkeypatch.setattr(basetemp, "MEMORY_FS", fs)
    monkeypatch.setattr(basetemp, "MOUNTS", mounts)
    return fs


def test_homes_go_to_the_memory_file_system_and_are_removed_at_the_end(memory_fs: Path) -> None:
    chosen = basetemp.choose("ref", tmpdir_set=False)
    assert chosen == (memory_fs / f"memconform-{os.getuid()}" / f"pytest-{os.getpid()}", True)
    assert (memory_fs / f"memconform-{os.getuid()}").stat().st_mode & 0o777 == 0o700


def test_a_folder_that_is_not_a_tmpfs_leaves_pytests_default(
        memory_fs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(basetemp, "MOUNTS", memory_fs / "no-such-mounts-file")
    assert basetemp.choose("exec:./my-port", tmpdir_set=False) is None
    basetemp.MOUNTS.write_text(f"/dev/vda {memory_fs} ext4 rw 0 0\n")
    assert basetemp.choose("exec:./my-port", tmpdir_set=False) is None


def test_a_full_memory_file_system_leaves_pytests_default(
        memory_fs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(basetemp, "MEMORY_MIN_FREE", 1 << 60)
    assert basetemp.choose("ref", tmpdir_set=False) is None


def test_tmpdir_set_by_the_user_wins(memory_fs: Path) -> None:
    assert basetemp.choose("ref", tmpdir_set=True) is None


def test_codex_homes_go_to_memory_and_are_removed_at_the_end(memory_fs: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.delenv(binary.WORKDIR_ENV, raising=False)
    chosen = basetemp.choose("codex@0.171.0", tmpdir_set=True)
    assert chosen == (memory_fs / f"memconform-{os.getuid()}" / f"pytest-{os.getpid()}", True)


def test_codex_homes_go_to_the_cache_and_stay_without_a_memory_fs(
        memory_fs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(binary.WORKDIR_ENV, raising=False)
    monkeypatch.setattr(basetemp, "MOUNTS", memory_fs / "no-such-mounts-file")
    monkeypatch.setattr(binary, "work_dir", lambda: tmp_path / "cache")
    chosen = basetemp.choose("codex@0.171.0", tmpdir_set=True)
    assert chosen == (tmp_path / "cache" / f"pytest-{os.getpid()}", False)


def test_the_codex_work_dir_setting_wins_over_memory(memory_fs: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(binary.WORKDIR_ENV, str(tmp_path / "mine"))
    chosen = basetemp.choose("codex", tmpdir_set=False)
    assert chosen == (tmp_path / "mine" / f"pytest-{os.getpid()}", False)


def test_a_dead_runs_folder_is_removed_and_a_live_ones_kept(memory_fs: Path) -> None:
    base = memory_fs / f"memconform-{os.getuid()}"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, timeout=30)
    dead_folder = base / f"pytest-{dead.stdout.strip()}"
    live_folder = base / f"pytest-{os.getppid()}"
    left_over = base / f"{basetemp.TRASH}pytest-1-2"  # a deletion cut short
    for folder in (dead_folder, live_folder, left_over):
        (folder / "home").mkdir(parents=True)
    basetemp.choose("ref", tmpdir_set=False)
    assert not dead_folder.exists(), "the dead run's folder was not moved out of the way"
    assert (live_folder / "home").is_dir()
    deadline = time.monotonic() + 30
    while list(base.glob(f"{basetemp.TRASH}*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list(base.glob(f"{basetemp.TRASH}*")), \
        "the background deletion did not remove the dead run's and the left-over folders"
    assert sorted(base.iterdir()) == [live_folder]

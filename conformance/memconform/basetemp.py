"""Where a run builds its Codex homes (pytest's base temporary folder), unless --basetemp or
TMPDIR says otherwise.

- `--impl codex`: the binary refuses to set up its helpers under /tmp, so homes go to the
  user's cache.
- Any other implementation: homes are thousands of small files and SQLite writes, so they go
  to a memory file system (/dev/shm) when it is a writable tmpfs with room; on this project's
  VM disk the reference's suite took 114 s there against 71 s in memory.

Either way each run has its own folder (`pytest-PID`, so two runs never share homes), a dead
run's folder is removed at the next run, and a run removes its memory folder when it ends
(a failing check's home is copied into its bundle first).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

MEMORY_FS = Path("/dev/shm")
MEMORY_MIN_FREE = 1 << 30
MOUNTS = Path("/proc/self/mounts")


def choose(impl: str, tmpdir_set: bool) -> tuple[Path, bool] | None:
    """The folder for this run's homes and whether the run removes it at its end, or None
    for pytest's default."""
    if impl.startswith("codex"):
        from memconform.codex.binary import work_dir
        return _own_folder(work_dir()), False
    if tmpdir_set:
        return None
    base = memory_base()
    return None if base is None else (_own_folder(base), True)


def memory_base() -> Path | None:
    """`/dev/shm/memconform-UID` when /dev/shm is a writable tmpfs with 1 GiB free."""
    if not _is_tmpfs(MEMORY_FS) or not os.access(MEMORY_FS, os.W_OK | os.X_OK):
        return None
    stats = os.statvfs(MEMORY_FS)
    if stats.f_bavail * stats.f_frsize < MEMORY_MIN_FREE:
        return None
    return MEMORY_FS / f"memconform-{os.getuid()}"


def _is_tmpfs(path: Path) -> bool:
    try:
        lines = MOUNTS.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any(fields[1] == str(path) and fields[2] == "tmpfs"
               for fields in (line.split() for line in lines) if len(fields) > 2)


def _own_folder(base: Path) -> Path:
    base.mkdir(mode=0o700, parents=True, exist_ok=True)  # pytest creates only the last level
    for stale in base.glob("pytest-*"):
        pid = stale.name.removeprefix("pytest-")
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return base / f"pytest-{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

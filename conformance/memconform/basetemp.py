"""Where a run builds its Codex homes (pytest's base temporary folder), unless --basetemp or
TMPDIR says otherwise.

- Homes are thousands of small files and SQLite writes, so they go to a memory file system
  (/dev/shm) when it is a writable tmpfs with room: on this project's VM disk the reference's
  suite took 114 s there against 71 s in memory.
- `--impl codex`: `MEMCONFORM_CODEX_WORKDIR` when set; else memory as above; else the user's
  cache (never /tmp: the binary refuses to set up its helpers there).

Either way each run has its own folder (`pytest-PID`, so two runs never share homes), a dead
run's folder is removed at the next run, and a run removes its memory folder when it ends
(a failing check's home is copied into its bundle first). The next run renames a dead run's
folder to `.trash-…` and a detached low-priority process deletes it: a full Codex run leaves
about 450 MB of small files, which took the next run over 200 s to delete on this project's
VM disk before its first check could start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MEMORY_FS = Path("/dev/shm")
MEMORY_MIN_FREE = 1 << 30
MOUNTS = Path("/proc/self/mounts")
TRASH = ".trash-"
# forks a child that outlives it (so the run never waits for it, and no zombie is left), and
# that child deletes every `.trash-*` folder under argv[1] at the lowest CPU priority
_DELETE = f"""
import os, pathlib, shutil, sys
if os.fork() == 0:
    os.setsid()
    os.nice(19)
    for folder in pathlib.Path(sys.argv[1]).glob("{TRASH}*"):
        shutil.rmtree(folder, ignore_errors=True)
"""


def choose(impl: str, tmpdir_set: bool) -> tuple[Path, bool] | None:
    """The folder for this run's homes and whether the run removes it at its end, or None
    for pytest's default."""
    if impl.startswith("codex"):
        from memconform.codex.binary import WORKDIR_ENV, work_dir
        memory = None if os.environ.get(WORKDIR_ENV) else memory_base()
        return (_own_folder(memory), True) if memory else (_own_folder(work_dir()), False)
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
            try:
                stale.rename(base / f"{TRASH}{stale.name}-{os.getpid()}")
            except OSError:  # another run renamed it first
                continue
    if next(base.glob(f"{TRASH}*"), None) is not None:
        delete_in_background(base)
    return base / f"pytest-{os.getpid()}"


def delete_in_background(base: Path) -> None:
    """Start the detached process that deletes the `.trash-*` folders under `base` (also
    those a deletion cut short left)."""
    subprocess.run([sys.executable, "-c", _DELETE, str(base)], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

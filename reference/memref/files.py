"""Crash-safe file writes: a killed process leaves either the old file or the whole new one.

Each write goes to a temporary file in the target's directory and is renamed (or, when the
target must not exist yet, hard-linked) into place. No fsync: the guarantee is against a killed
process, not a power loss."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

CREATE_ATTEMPTS = 5


def _temp_with(directory: Path, text: str) -> Path:
    fd, name = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8, `\\n` line ends) in one rename."""
    tmp = _temp_with(path.parent, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def create_atomic(path: Path, text: str) -> bool:
    """Create `path` with `text` unless a non-empty file is there; True when written.

    An empty file counts as absent: it is what a writer killed between creating and writing
    the file would have left. A temporary file swept away by a concurrent startup's
    `remove_leftovers` before it was linked is written again."""
    try:
        if not path.is_symlink() and path.is_file() and path.stat().st_size == 0:
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
    for _ in range(CREATE_ATTEMPTS):
        tmp = _temp_with(path.parent, text)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except FileNotFoundError:
            continue
        finally:
            tmp.unlink(missing_ok=True)
        return True
    raise OSError(f"{path}: its temporary file was removed {CREATE_ATTEMPTS} times before it "
                  f"could be linked")


def remove_leftovers(directory: Path) -> None:
    """Delete the temporary files killed writers left directly in `directory`."""
    if not directory.is_dir():
        return
    for entry in directory.glob(".tmp-*.part"):
        try:
            if entry.is_file() and not entry.is_symlink():
                entry.unlink()
        except FileNotFoundError:
            pass

"""`memories/add_ad_hoc_note`: one new note file under `extensions/ad_hoc/notes/`, never
overwriting anything (TOOL-NOTE-01..06)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from memref.citations import WHITESPACE
from memref.tools.errors import ToolError, invalid_path, io_error

NOTES_DIR = ("extensions", "ad_hoc", "notes")
MAX_NAME_BYTES = 128
STAMP_BYTES = 20  # "YYYY-MM-DDTHH-MM-SS-"
DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
SEPARATORS = {4: "-", 7: "-", 10: "T", 13: "-", 16: "-", 19: "-"}
SLUG_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-")
FORMAT = "must use YYYY-MM-DDTHH-MM-SS-<slug>.md"


def check_filename(filename: str) -> None:
    """`YYYY-MM-DDTHH-MM-SS-<slug>.md` with a 1..80 byte slug of `[a-z0-9-]`, at most 128
    bytes; the digits are not checked as a calendar date."""
    data = filename.encode("utf-8")

    def refuse(reason: str) -> ToolError:
        return ToolError(f"filename '{filename}' {reason}")

    if len(data) > MAX_NAME_BYTES:
        raise refuse(f"must be at most {MAX_NAME_BYTES} bytes")
    if not data.endswith(b".md"):
        raise refuse("must end with .md")
    stem = data[:-3]
    if (len(stem) <= STAMP_BYTES or not all(48 <= stem[i] <= 57 for i in DIGITS)
            or any(stem[i] != ord(c) for i, c in SEPARATORS.items())):
        raise refuse(FORMAT)
    slug = stem[STAMP_BYTES:]
    if not 1 <= len(slug) <= 80:
        raise refuse("slug must be 1 to 80 bytes")
    if not set(slug) <= SLUG_BYTES:
        raise refuse("slug must contain only lowercase ASCII letters, digits, or hyphens")


def ensure_directory(path: Path) -> None:
    """Create one directory level; an existing symlink or non-directory is refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        try:
            os.mkdir(path)
        except FileExistsError:
            ensure_directory(path)
        except OSError as exc:
            raise io_error(exc) from None
        return
    if stat.S_ISLNK(info.st_mode):
        raise invalid_path(str(path), "must not be a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise invalid_path(str(path), "must be a directory")


def add_note(root: Path, filename: str, note: str) -> dict[str, Any]:
    check_filename(filename)
    if not note.strip(WHITESPACE):
        raise ToolError("ad-hoc note must not be empty")
    folder = root
    ensure_directory(folder)
    for part in NOTES_DIR:
        folder = folder / part
        ensure_directory(folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder / filename, flags, 0o644)
    except FileExistsError:
        raise ToolError(f"ad-hoc note '{filename}' already exists") from None
    except OSError as exc:
        raise io_error(exc) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(note.encode("utf-8"))
    return {}

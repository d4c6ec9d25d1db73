"""Resolving a tool's `path` argument inside the memory root (TOOL-PATH-01..TOOL-PATH-05).

Nothing is ever followed: every existing component is inspected with `lstat`, so a symlink at
any depth, a hidden component or a walk through a file is refused before anything is opened.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TypeVar

from memref.tools.errors import ToolError, invalid_path, io_error, not_found

OUTSIDE = "must stay within the memories root"
DRIVE = re.compile(r"^[A-Za-z]:")
T = TypeVar("T")


def components(path: str) -> list[str]:
    """The normal components of a relative path, as Rust's `Path::components` yields them on
    Unix: empty and `.` components vanish; `..`, a leading `/` or a drive prefix are refused
    first, then hidden components are reported missing."""
    if path.startswith("/") or DRIVE.match(path):
        raise invalid_path(path, OUTSIDE)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise invalid_path(path, OUTSIDE)
    if any(p.startswith(".") for p in parts):
        raise not_found(path)
    return parts


def resolve(root: Path, path: str | None) -> Path:
    """The absolute path `path` names under `root`, checked component by component; a missing
    component ends the walk (the caller reports it missing)."""
    if path is None:
        return root
    parts = components(path)
    current = root
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return current.joinpath(*parts[index + 1:])
        except (OSError, ValueError) as exc:
            raise io_error(exc) from None
        if stat.S_ISLNK(mode):
            raise invalid_path("/".join(parts[:index + 1]), "must not be a symlink")
        if index + 1 < len(parts) and not stat.S_ISDIR(mode):
            raise invalid_path(path, "traverses through a non-directory path component")
    return current


def inspect(target: Path, path: str | None) -> os.stat_result:
    """`lstat` a resolved target that must exist and must not be a symlink."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        raise not_found(path or "") from None
    except (OSError, ValueError) as exc:
        raise io_error(exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise invalid_path(path or "", "must not be a symlink")
    return info


def display(root: Path, target: Path) -> str:
    """A path as responses show it: relative to the root, `/`-joined."""
    return "/".join(target.relative_to(root).parts)


def parse_cursor(cursor: str | None) -> int:
    """A pagination cursor: absent is 0; otherwise an unsigned decimal (Rust `usize` rules)."""
    if cursor is None:
        return 0
    digits = cursor[1:] if cursor.startswith("+") else cursor
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ToolError(f"cursor '{cursor}' must be a non-negative integer")
    return int(digits)


def page(items: list[T], cursor: int, limit: int) -> tuple[list[T], str | None]:
    """One page of `items` and the next cursor (None on the last page)."""
    if cursor > len(items):
        raise ToolError(f"cursor '{cursor}' exceeds result count")
    end = min(cursor + limit, len(items))
    return items[cursor:end], (str(end) if end < len(items) else None)

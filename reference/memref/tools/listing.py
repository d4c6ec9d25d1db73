"""`memories/list`: the immediate entries under a path, paginated (TOOL-LIST-01..05)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from memref.tools.paths import display, inspect, page, parse_cursor, resolve

MAX_RESULTS = 2_000


def entry_type(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return "file"
    return "directory" if stat.S_ISDIR(mode) else None


def children(root: Path, folder: Path) -> list[dict[str, str]]:
    """Visible files and directories directly in `folder`, in byte order of their names;
    hidden names, symlinks and other file types are left out."""
    found = []
    for name in sorted(os.listdir(folder), key=os.fsencode):
        if name.startswith("."):
            continue
        kind = entry_type(os.lstat(folder / name).st_mode)
        if kind is not None:
            found.append({"path": display(root, folder / name), "entry_type": kind})
    return found


def list_entries(root: Path, path: str | None, cursor: str | None,
                 max_results: int | None) -> dict[str, Any]:
    target = resolve(root, path)
    start = parse_cursor(cursor)
    info = inspect(target, path)
    if stat.S_ISDIR(info.st_mode):
        entries = children(root, target)
    elif stat.S_ISREG(info.st_mode):
        entries = [{"path": display(root, target), "entry_type": "file"}]
    else:
        entries = []
    limit = min(max(MAX_RESULTS if max_results is None else max_results, 1), MAX_RESULTS)
    shown, next_cursor = page(entries, start, limit)
    return {"path": path, "entries": shown, "next_cursor": next_cursor,
            "truncated": next_cursor is not None}

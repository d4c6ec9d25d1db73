"""`memories/read`: one memory file, from a 1-based line, at most some lines, token-capped
(TOOL-READ-01..07)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from memref.tools.errors import ToolError, io_error
from memref.tools.paths import inspect, resolve
from memref.truncate import truncate_middle

MAX_TOKENS = 20_000


def start_of_line(text: str, line: int) -> int:
    """Where 1-based `line` starts: just after the (line-1)-th newline."""
    position = 0
    for _ in range(line - 1):
        newline = text.find("\n", position)
        if newline == -1:
            raise ToolError("line_offset exceeds file length")
        position = newline + 1
    return position


def end_after_lines(text: str, start: int, count: int | None) -> int:
    """Just after the `count`-th newline from `start`, or the end of the text."""
    if count is None:
        return len(text)
    position = start
    for _ in range(count):
        newline = text.find("\n", position)
        if newline == -1:
            return len(text)
        position = newline + 1
    return position


def read_file(root: Path, path: str, line_offset: int | None,
              max_lines: int | None) -> dict[str, Any]:
    offset = 1 if line_offset is None else line_offset
    if offset == 0:
        raise ToolError("line_offset must be a 1-indexed line number")
    if max_lines == 0:
        raise ToolError("max_lines must be a positive integer")
    target = resolve(root, path)
    info = inspect(target, path)
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"path '{path}' is not a file")
    try:
        text = target.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise io_error(exc) from None
    start = start_of_line(text, offset)
    end = end_after_lines(text, start, max_lines)
    content = truncate_middle(text[start:end], MAX_TOKENS)
    return {"path": path, "start_line_number": offset, "content": content,
            "truncated": end < len(text) or content != text[start:end]}

"""`memories/search`: substring search over memory files with several queries, three match
modes, case and punctuation options, context lines and pagination (TOOL-SEARCH-01..10)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memref.citations import rust_lines
from memref.tools.errors import ToolError, io_error
from memref.tools.paths import display, inspect, page, parse_cursor, resolve

MAX_RESULTS = 200
EMPTY_QUERIES = "queries must not be empty or contain empty strings"


@dataclass(frozen=True)
class Matcher:
    queries: list[str]
    prepared: list[str]
    case_sensitive: bool
    normalized: bool

    def prepare(self, text: str) -> str:
        """Lowercased unless case-sensitive; only letters and digits when normalized."""
        if not self.case_sensitive:
            text = text.lower()
        if self.normalized:
            text = "".join(c for c in text if c.isalnum())
        return text

    def hits(self, line: str) -> list[bool]:
        prepared = self.prepare(line)
        return [query in prepared for query in self.prepared]


def matcher(queries: list[str], case_sensitive: bool, normalized: bool) -> Matcher:
    base = Matcher(queries, [], case_sensitive, normalized)
    prepared = [base.prepare(q) for q in queries]
    if not all(prepared):
        raise ToolError(EMPTY_QUERIES)
    return Matcher(queries, prepared, case_sensitive, normalized)


def files_under(target: Path, info: os.stat_result) -> Iterator[Path]:
    """The target file, or every regular file below the target directory; hidden names and
    symlinks are skipped and never descended."""
    if stat.S_ISREG(info.st_mode):
        yield target
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    for name in os.listdir(target):
        if name.startswith("."):
            continue
        child = target / name
        mode = os.lstat(child)
        if stat.S_ISDIR(mode.st_mode) or stat.S_ISREG(mode.st_mode):
            yield from files_under(child, mode)


def windows(flags: list[list[bool]], span: int) -> list[tuple[int, int]]:
    """`all_within_lines`: from each line that matches a query, the shortest window of at most
    `span` lines covering every query; windows that contain another window are dropped."""
    found: list[tuple[int, int]] = []
    for start, first in enumerate(flags):
        if not any(first):
            continue
        covered = list(first)
        for end in range(start, min(start + span, len(flags))):
            covered = [a or b for a, b in zip(covered, flags[end], strict=True)]
            if all(covered):
                found.append((start, end))
                break
    # starts are unique and ascending: a window holds another iff a later one ends no later
    kept, earliest_end = [], len(flags)
    for start, end in reversed(found):
        if end < earliest_end:
            kept.append((start, end))
        earliest_end = min(earliest_end, end)
    return kept[::-1]


def file_matches(lines: list[str], match: Matcher, mode: dict[str, Any]
                 ) -> list[tuple[int, int, list[str]]]:
    """(first line, last line, matched queries) of every match in one file, 0-based."""
    flags = [match.hits(line) for line in lines]
    if mode["type"] == "all_within_lines":
        return [(s, e, match.queries) for s, e in windows(flags, mode["line_count"])]
    need_all = mode["type"] == "all_on_same_line"
    return [(i, i, [q for q, hit in zip(match.queries, f, strict=True) if hit])
            for i, f in enumerate(flags) if (all(f) if need_all else any(f))]


def search(root: Path, queries: list[str], match_mode: dict[str, Any] | None,
           path: str | None, cursor: str | None, context_lines: int | None,
           case_sensitive: bool | None, normalized: bool | None,
           max_results: int | None) -> dict[str, Any]:
    trimmed = [q.strip() for q in queries]
    if not trimmed or not all(trimmed):
        raise ToolError(EMPTY_QUERIES)
    mode = match_mode or {"type": "any"}
    if mode["type"] == "all_within_lines" and mode["line_count"] == 0:
        raise ToolError("all_within_lines.line_count must be a positive integer")
    target = resolve(root, path)
    start = parse_cursor(cursor)
    info = inspect(target, path)
    match = matcher(trimmed, True if case_sensitive is None else case_sensitive,
                    bool(normalized))
    context = context_lines or 0
    found = []
    for file in files_under(target, info):
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        except OSError as exc:
            raise io_error(exc) from None
        lines = rust_lines(text)
        for first, last, hit in file_matches(lines, match, mode):
            low, high = max(0, first - context), min(len(lines), last + context + 1)
            found.append({"path": display(root, file), "match_line_number": first + 1,
                          "content_start_line_number": low + 1,
                          "content": "\n".join(lines[low:high]), "matched_queries": hit})
    found.sort(key=lambda m: (m["path"], m["match_line_number"]))
    limit = min(max(MAX_RESULTS if max_results is None else max_results, 1), MAX_RESULTS)
    shown, next_cursor = page(found, start, limit)
    return {"queries": trimmed, "match_mode": mode, "path": path, "matches": shown,
            "next_cursor": next_cursor, "truncated": next_cursor is not None}

"""Deterministic text for failure records: values, windows around a difference, diffs.

Two runs of the same failing implementation must give byte-identical records, so everything
that varies between runs (temporary directories, loopback ports, object addresses) is
replaced by a fixed placeholder, and long values are cut at fixed places.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import enum
import json
import re
import sqlite3
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any

VALUE_LIMIT = 2000
WINDOW = 160
DIFF_LINES = 60
SENTENCE_LIMIT = 300
_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d{2,5}\b")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class Normalizer:
    """Replaces the run-specific parts of a text: each directory given becomes its label."""

    def __init__(self, directories: Iterable[tuple[str, str]] = ()) -> None:
        pairs = sorted(((str(path), label) for path, label in directories if str(path)),
                       key=lambda pair: -len(pair[0]))
        self._dirs = [(re.compile(re.escape(path) + r"(?=/|\b|$)"), label)
                      for path, label in pairs]

    def __call__(self, text: str) -> str:
        for pattern, label in self._dirs:
            text = pattern.sub(label, text)
        text = _PORT.sub(r"\1:<port>", text)
        return _ADDRESS.sub("", text)


def normalizer_for(item: Any) -> Normalizer:
    """The normalizer of one pytest item: its temporary directories become `<tmp>`."""
    dirs: list[tuple[str, str]] = []
    funcargs = getattr(item, "funcargs", {})
    if isinstance(funcargs.get("tmp_path"), PurePath):
        dirs.append((str(funcargs["tmp_path"]), "<tmp>"))
    factory = getattr(item.config, "_tmp_path_factory", None)
    if factory is not None:
        with contextlib.suppress(OSError):
            dirs.append((str(factory.getbasetemp()), "<tmp>"))
    return Normalizer(dirs)


MAX_DEPTH = 32


def plain(value: Any, _seen: frozenset[int] = frozenset()) -> Any:
    """`value` as JSON-compatible data, with no object reprs left in it; a container met
    again inside itself (or nested deeper than MAX_DEPTH) reads `<…>`."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, bytes):
        return repr(value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return plain(value.value, _seen)
    if id(value) in _seen or len(_seen) >= MAX_DEPTH:
        return "<…>"
    seen = _seen | {id(value)}
    if isinstance(value, sqlite3.Row):
        return {key: plain(value[key], seen) for key in value.keys()}  # noqa: SIM118
    if type(value).__name__ == "SnapshotAssertion":  # syrupy's: its fields point back at it
        return _stored_snapshot(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), seen) for f in dataclasses.fields(value)
                if f.repr}
    if isinstance(value, dict):
        return {str(plain(k, seen)): plain(v, seen) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((plain(v, seen) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [plain(v, seen) for v in value]
    return f"<{type(value).__name__}>"


def _stored_snapshot(snapshot: Any) -> str:
    """The serialized value the last comparison with a syrupy snapshot recalled."""
    try:
        results = snapshot.executions
        recalled = results[max(results)].recalled_data
    except (AttributeError, KeyError, TypeError, ValueError):
        return "<snapshot>"
    return recalled if isinstance(recalled, str) else "<no stored snapshot>"


def render(value: Any, normalize: Normalizer) -> str:
    """A value as text: strings as they are, anything else as JSON (one line when short)."""
    if isinstance(value, str):
        return normalize(value)
    data = plain(value)
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > 100:
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    return normalize(text)


def cut(text: str, limit: int = VALUE_LIMIT) -> str:
    """At most `limit` characters: the head and the tail, with the number left out."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}…[{len(text) - 2 * half} characters]…{text[-half:]}"


def first_difference(a: str, b: str) -> int | None:
    """The first character offset where `a` and `b` differ (None when equal)."""
    if a == b:
        return None
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def window(text: str, at: int, size: int = WINDOW) -> str:
    """The part of `text` around offset `at`, marked where it was cut."""
    start, end = max(0, at - size), min(len(text), at + size)
    head = f"…[{start} characters]…" if start else ""
    tail = f"…[{len(text) - end} characters]…" if end < len(text) else ""
    return head + text[start:end] + tail


def around_difference(expected: str, actual: str) -> tuple[str, str]:
    """Both texts, cut to the region of their first difference when they are long."""
    if len(expected) <= VALUE_LIMIT and len(actual) <= VALUE_LIMIT:
        return expected, actual
    at = first_difference(expected, actual)
    if at is None:
        return cut(expected), cut(actual)
    return window(expected, at), window(actual, at)


def diff(expected: str, actual: str) -> str | None:
    """A unified diff of two multi-line texts (None for single lines), at most DIFF_LINES."""
    if "\n" not in expected.strip() and "\n" not in actual.strip():
        return None
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected",
                                      "actual", n=2, lineterm=""))
    if not lines:
        return None
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"…[{len(lines) - DIFF_LINES} more diff lines]"]
    return "\n".join(cut(line, 400) for line in lines)


def sentence(text: str) -> str:
    """One line of at most SENTENCE_LIMIT characters."""
    first = " ".join(text.strip().split("\n", 1)[0].split())
    return first if len(first) <= SENTENCE_LIMIT else first[:SENTENCE_LIMIT - 1] + "…"

"""Normalize file trees and texts for snapshot tests: volatile ids and times are masked.

UUIDs become `<uuid-1>`, `<uuid-2>`… in order of first appearance (so equal ids stay equal),
timestamps become `<time>`, and binary files are shown by size class only.
"""

from __future__ import annotations

import re
from pathlib import Path

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
TIMES = (
    re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?"),
    re.compile(r"\b1[6-9]\d{8}(?:\d{3})?\b"),  # Unix seconds or milliseconds, 2020s-2030s
)
DATE_DIRS = re.compile(r"\b\d{4}/\d{2}/\d{2}\b")


class Masker:
    def __init__(self, paths: dict[str, str] | None = None) -> None:
        self._ids: dict[str, str] = {}
        # longest first, so a nested directory is masked before its parent
        self._paths = sorted((paths or {}).items(), key=lambda kv: -len(kv[0]))

    def _uuid(self, match: re.Match[str]) -> str:
        key = match.group(0).lower()
        return self._ids.setdefault(key, f"<uuid-{len(self._ids) + 1}>")

    def text(self, text: str) -> str:
        for path, label in self._paths:
            text = text.replace(path, label)
        text = UUID.sub(self._uuid, text)
        for pattern in TIMES:
            text = pattern.sub("<time>", text)
        return DATE_DIRS.sub("<date>", text)


def tree(root: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, str]:
    """Every file under `root` (sorted, relative) mapped to its masked text; the directory
    holding `root` is shown as `<base>`."""
    masker = Masker({str(root.resolve().parent): "<base>"})
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in skip for part in rel.parts) or path.is_dir():
            continue
        data = path.read_bytes()
        try:
            content = masker.text(data.decode("utf-8"))
        except UnicodeDecodeError:
            content = f"<binary, {'empty' if not data else 'non-empty'}>"
        out[masker.text(str(rel))] = content
    return out

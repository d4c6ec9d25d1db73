"""A failing check's bundle: everything needed to study it without rerunning the harness.

`<dir>/<check id>/` holds `check.json` (the record and the text of its rules),
`transcript.jsonl` (every protocol request and response), `model.json` (the requests the mock
model received and the replies it was scripted with), `home-before.txt` and `home-after.txt`
(the Codex home's tree with sizes and SHA-256, then a SQL dump of each SQLite file), and
`memories/` (the memory root as the implementation left it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.rendering import Normalizer, plain
from memconform.spec import load_rules

HASH_LIMIT = 16 * 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]=+,@]")


def directory_name(check_id: str) -> str:
    """A file name for a check id (every character outside a safe set becomes `_`)."""
    return _UNSAFE.sub("_", check_id)[:200]


@dataclass(frozen=True)
class HomeState:
    """A home as found: its tree (type, size, SHA-256) and its SQLite files' bytes, turned
    into text only when a bundle needs it (most checks pass and never do)."""
    root: Path
    exists: bool
    entries: list[tuple[str, str, str]]  # (kind, relative path, detail)
    databases: list[tuple[str, bytes | str]]  # (relative path, file bytes or its dump)

    def render(self, normalize: Normalizer) -> str:
        if not self.exists:
            return f"{normalize(str(self.root))}: does not exist\n"
        lines = [f"link {rel} -> {normalize(detail)}" if kind == "link"
                 else f"dir  {rel}/" if kind == "dir" else f"file {rel} {detail}"
                 for kind, rel, detail in self.entries]
        dumps = [f"\n-- {rel}\n{_dump_bytes(db) if isinstance(db, bytes) else db}"
                 for rel, db in self.databases]
        return "\n".join(lines) + "\n" + "".join(dumps)


def capture_home(root: Path) -> HomeState:
    """The state of the home under `root` now (see HomeState): every entry below it, symbolic
    links listed but not followed, in path order."""
    if not root.exists():
        return HomeState(root, False, [], [])
    found: list[str] = []
    for top, dirs, files in os.walk(root):
        prefix = os.path.relpath(top, root).replace(os.sep, "/") + "/"
        prefix = "" if prefix == "./" else prefix
        found.extend(prefix + name for name in (*dirs, *files))
    found.sort(key=lambda rel: rel.split("/"))
    entries: list[tuple[str, str, str]] = []
    databases: list[tuple[str, bytes | str]] = []
    for rel in found:
        path = root / rel
        try:
            info = os.lstat(path)
            mode = info.st_mode
            if stat.S_ISDIR(mode):
                entries.append(("dir", rel, ""))
            elif stat.S_ISLNK(mode):
                entries.append(("link", rel, os.readlink(path)))
            elif stat.S_ISREG(mode):
                _capture_file(path, rel, info.st_size, entries, databases)
        except FileNotFoundError:
            continue  # removed while the home was walked
    return HomeState(root, True, entries, databases)


def _capture_file(path: Path, rel: str, size: int, entries: list[tuple[str, str, str]],
                  databases: list[tuple[str, bytes | str]]) -> None:
    data = path.read_bytes() if size <= HASH_LIMIT else None
    digest = "(not hashed)" if data is None else hashlib.sha256(data).hexdigest()
    entries.append(("file", rel, f"{size} {digest}"))
    if os.path.splitext(rel)[1] == ".sqlite":
        wal = path.with_name(path.name + "-wal")
        pending = wal.exists() and wal.stat().st_size > 0
        # committed rows still in a WAL file are not in the main file's bytes
        databases.append((rel, _dump(path) if data is None or pending else data))


def describe_home(root: Path, normalize: Normalizer) -> str:
    """The tree under `root` (type, size, SHA-256) and a SQL dump of each SQLite file."""
    return capture_home(root).render(normalize)


def _dump(path: Path) -> str:
    return _sql(lambda: sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5))


def _dump_bytes(data: bytes) -> str:
    """The SQL dump of a database file's bytes, read in memory (a WAL-mode header is set to
    rollback mode first: an in-memory database cannot open a WAL)."""
    image = bytearray(data)
    if len(image) >= 20 and image[18:20] == b"\x02\x02":
        image[18:20] = b"\x01\x01"

    def loaded() -> sqlite3.Connection:
        con = sqlite3.connect(":memory:")
        con.deserialize(bytes(image))
        return con

    return _sql(loaded)


def _sql(connect: Callable[[], sqlite3.Connection]) -> str:
    """The SQL dump of the database `connect` opens, or why it cannot be dumped."""
    try:
        con = connect()
        try:
            return "\n".join(con.iterdump()) + "\n"
        finally:
            con.close()
    except sqlite3.Error as exc:
        return f"-- cannot dump: {exc}\n"


def _response(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return line


def write(out: Path, record: dict[str, Any], *, transcript: list[dict[str, Any]],
          model: Any, home: Path | None, before: str | None, normalize: Normalizer) -> Path:
    """Write one bundle; the directory is replaced when it exists."""
    target = out / directory_name(record["id"])
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    rules = load_rules()
    texts = {rid: {"title": r.title, "level": r.level, "evidence": r.evidence, "text": r.text}
             for rid in record.get("rules", []) if (r := rules.get(rid)) is not None}
    (target / "check.json").write_text(json.dumps({"record": record, "rules": texts},
                                                  indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    with (target / "transcript.jsonl").open("w", encoding="utf-8") as handle:
        for entry in transcript:
            if "response" in entry:
                entry = {"response": _response(entry["response"])}
            handle.write(normalize(json.dumps(entry, ensure_ascii=False)) + "\n")
    if model is not None:
        scripted = [{"kind": rule.kind, "contains": rule.contains,
                     "has_tool_output": rule.has_tool_output, "used": rule.used,
                     "replies": [plain(reply) for reply in rule.replies]}
                    for rule in model.rules]
        received = [{"seq": r.seq, "kind": r.kind, "path": r.path, "body": r.body}
                    for r in model.requests]
        (target / "model.json").write_text(
            normalize(json.dumps({"received": received, "scripted": scripted}, indent=2,
                                 ensure_ascii=False, default=str)) + "\n", encoding="utf-8")
    if before is not None:
        (target / "home-before.txt").write_text(before, encoding="utf-8")
    if home is not None:
        (target / "home-after.txt").write_text(describe_home(home, normalize),
                                               encoding="utf-8")
        for folder in ("memories", "memories_v2"):  # the memory roots of layouts v1 and v2
            if (home / folder).is_dir():
                shutil.copytree(home / folder, target / folder, symlinks=True)
    return target

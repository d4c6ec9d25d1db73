"""Locate the data files shipped with memconform (fixtures, SPEC, MANIFEST, schemas)."""

from __future__ import annotations

import json
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent.parent  # source checkout: <repo>/conformance/memconform


@cache
def fixtures_dir() -> Path:
    """The `fixtures/` tree: inside the wheel, or at the top of a source checkout."""
    for candidate in (_PACKAGE / "_fixtures", _REPO / "fixtures"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("memconform fixtures not found (broken installation)")


def fixture(*parts: str) -> Path:
    path = fixtures_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"missing fixture {'/'.join(parts)} under {fixtures_dir()}")
    return path


def doc(name: str) -> Path:
    """SPEC.md, MANIFEST.json or PROTOCOL.md, wherever this installation keeps them."""
    for candidate in (_PACKAGE / "_docs" / name, _REPO / "conformance" / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"memconform document {name} not found")


def protocol_schema_dir() -> Path:
    return _PACKAGE / "protocol" / "v1"


CODEX_VERSION = "0.144.6"  # the baseline release: its schema dumps build every home


def codex_schema_sql(db: str, release: str = CODEX_VERSION) -> str:
    """DDL and migration rows of one SQLite file (`state_5`, `memories_1`, `memories_v2_1`) as
    that Codex release creates it (0.144.6 unless named)."""
    return fixture(f"codex-{release}", f"{db}.sql").read_text(encoding="utf-8")


def codex_schema_statements(db: str, release: str = CODEX_VERSION) -> list[str]:
    """The schema script as complete statements (trigger bodies kept whole)."""
    statements: list[str] = []
    pending = ""
    for line in codex_schema_sql(db, release).splitlines(keepends=True):
        if not pending and line.startswith("--"):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements


def progress_migration_statements() -> list[str]:
    """Migration 2 of the memories DB, as Codex 0.155.0 dumps it: the `consolidation_progress`
    table and its migration row (the table's one row is the migrating code's to insert)."""
    return [statement for statement in codex_schema_statements("memories_1", "0.155.0")
            if "consolidation_progress" in statement or "VALUES(2," in statement]


def fixture_json(*parts: str) -> Any:
    return json.loads(fixture(*parts).read_text(encoding="utf-8"))


@cache
def layout_checks(layout: str) -> frozenset[str]:
    """Ids of the checks about one memory layout only (`layout`)."""
    manifest = json.loads(doc("MANIFEST.json").read_text(encoding="utf-8"))
    return frozenset(c["id"] for c in manifest["checks"] if c.get("layout") == layout)


@cache
def later_release_checks() -> frozenset[str]:
    """Ids of the checks whose rules begin after the baseline release (`codex_since`)."""
    manifest = json.loads(doc("MANIFEST.json").read_text(encoding="utf-8"))
    return frozenset(c["id"] for c in manifest["checks"] if c.get("codex_since"))


@cache
def local_checks() -> tuple[tuple[str, str], ...]:
    """(id, area) of every local-profile check, from the shipped MANIFEST.json."""
    manifest = json.loads(doc("MANIFEST.json").read_text(encoding="utf-8"))
    return tuple((c["id"], c["area"]) for c in manifest["checks"] if c["profile"] == "local")

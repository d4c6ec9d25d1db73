"""Expectation files: what an implementation is known to fail, owned by the implementation.

```toml
["p1.cand.window"]            # a check record id, a check's id (all its cases), a dotted
status = "fail"               # prefix of ids ("p1.cand") or an area name ("phase1")
reason = "why it fails"
evidence = "what shows it (the failure's sentence, a request log line, a DB row)"
```

An entry naming one check record (`p1.cand.select[archived]`, or a check without cases) is
strict: the check must fail (`xfail`); if it passes the run reports `xpass` and fails. An
entry naming a group (a check's cases, an id prefix, an area) says "failures are expected
here": failing checks under it report `xfail`, passing ones `pass`, and the entry is stale
once nothing under it fails. `status = "skip"` is only for checks that hang or crash the
implementation: they are not run.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from memconform.registry import id_covers

STATUSES = ("fail", "skip")
FAILED = ("fail", "xfail")
NEW_REASON = "TODO: explain (new failure)"


class ExpectationsError(ValueError):
    """The expectations file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Expectation:
    key: str
    status: str
    reason: str
    evidence: str = ""

    def covers(self, check_id: str, area: str | None = None) -> bool:
        return self.key == area or id_covers(self.key, check_id)

    def strict_for(self, check_id: str) -> bool:
        """Whether this entry names exactly this check record."""
        return self.key == check_id


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ExpectationsError(f"{path}: no such expectations file") from exc
    except IsADirectoryError as exc:
        raise ExpectationsError(f"{path}: is a directory, not an expectations file") from exc
    except UnicodeDecodeError as exc:
        raise ExpectationsError(f"{path}: not UTF-8 text (byte {exc.start}); expectation "
                                "files are UTF-8 TOML") from exc


def _parse(path: Path, data: dict[str, Any]) -> list[Expectation]:
    entries = []
    for key, value in data.items():
        if not isinstance(value, dict):
            raise ExpectationsError(f"{path}: [{key}] must be a table")
        unknown = set(value) - {"status", "reason", "evidence"}
        if unknown:
            raise ExpectationsError(f"{path}: [{key}] has unknown fields {sorted(unknown)}")
        status = value.get("status")
        if status == "error":
            raise ExpectationsError(
                f"{path}: [{key}] status \"error\" is not an expectation: error means the "
                "adapter or the harness broke; fix that, or use \"skip\" for a check that "
                "hangs or crashes the implementation")
        if status not in STATUSES:
            raise ExpectationsError(f"{path}: [{key}] status must be one of {STATUSES}, "
                                    f"got {status!r}")
        reason = value.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ExpectationsError(f"{path}: [{key}] needs a non-empty reason")
        entries.append(Expectation(key, status, reason, str(value.get("evidence", ""))))
    return entries


class Expectations:
    def __init__(self, entries: list[Expectation], source: str | None = None) -> None:
        self.entries = entries
        self.source = source

    @classmethod
    def empty(cls) -> Expectations:
        return cls([])

    @classmethod
    def load(cls, path: Path) -> Expectations:
        return cls.load_text(_read(path), str(path))

    @classmethod
    def load_text(cls, text: str, source: str = "expectations") -> Expectations:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ExpectationsError(f"{source}: not valid TOML: {exc}") from exc
        return cls(_parse(Path(source), data), source)

    def lookup(self, check_id: str, area: str | None = None) -> Expectation | None:
        """The most specific entry covering `check_id` (an area name is the least)."""
        matches = [e for e in self.entries if e.covers(check_id, area)]
        return max(matches, key=lambda e: (e.key != area, len(e.key))) if matches else None

    def stale(self, checks: Iterable[tuple[str, str]],
              records: list[dict[str, Any]] | None = None) -> list[str]:
        """Entries that cover no known check, and group entries under which every check
        that ran passed. `checks` are (id, area) pairs."""
        known = list(checks)
        ran = records or []
        out = []
        for entry in self.entries:
            if not any(entry.covers(c, a) for c, a in known):
                out.append(entry.key)
                continue
            if entry.status != "fail":
                continue
            under = [r for r in ran if self.lookup(r["id"], r["area"]) == entry]
            if under and not any(r["status"] in FAILED for r in under):
                out.append(entry.key)
        return out


def updated(text: str, records: list[dict[str, Any]], source: str = "expectations") -> str:
    """The expectations file `text` rewritten for `records`: entries under which nothing
    failed are removed, every failure not covered gets a new entry (its sentence as
    evidence), and everything else — comments and hand-written reasons — is kept."""
    doc = tomlkit.parse(text) if text.strip() else tomlkit.document()
    existing = Expectations(_parse(Path(source), doc.unwrap()), source)
    keep: set[str] = {e.key for e in existing.entries if e.status == "skip"}
    new: dict[str, str] = {}
    for record in records:
        if record["status"] not in FAILED:
            continue
        entry = existing.lookup(record["id"], record["area"])
        if entry is not None and entry.status == "fail":
            keep.add(entry.key)
        else:
            new[record["id"]] = record.get("sentence") or ""
    for entry in existing.entries:
        if entry.key not in keep and any(entry.covers(r["id"], r["area"]) for r in records):
            del doc[entry.key]
    for key in sorted(new):
        table = tomlkit.table()
        table.add("status", "fail")
        table.add("reason", NEW_REASON)
        if new[key]:
            table.add("evidence", new[key])
        doc.add(key, table)
    return tomlkit.dumps(doc)

"""Expectation files: what an implementation is known to fail, owned by the implementation.

```toml
["p1.cand.window"]            # a check id, or a prefix of ids ("p1.cand")
status = "fail"               # reported as xfail; a pass becomes xpass and fails the run
reason = "why it fails"
evidence = "request log line, DB row or file that shows it"
```
`status = "skip"` is only for checks that hang or crash the implementation.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from memconform.registry import id_covers

STATUSES = ("fail", "skip")


class ExpectationsError(ValueError):
    """The expectations file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Expectation:
    key: str
    status: str
    reason: str
    evidence: str = ""

    def covers(self, check_id: str) -> bool:
        return id_covers(self.key, check_id)


class Expectations:
    def __init__(self, entries: list[Expectation], source: str | None = None) -> None:
        self.entries = entries
        self.source = source

    @classmethod
    def empty(cls) -> Expectations:
        return cls([])

    @classmethod
    def load(cls, path: Path) -> Expectations:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ExpectationsError(f"{path}: no such expectations file") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ExpectationsError(f"{path}: not valid TOML: {exc}") from exc
        entries = []
        for key, value in data.items():
            if not isinstance(value, dict):
                raise ExpectationsError(f"{path}: [{key}] must be a table")
            unknown = set(value) - {"status", "reason", "evidence"}
            if unknown:
                raise ExpectationsError(f"{path}: [{key}] has unknown fields {sorted(unknown)}")
            status = value.get("status")
            if status not in STATUSES:
                raise ExpectationsError(f"{path}: [{key}] status must be one of {STATUSES}, "
                                        f"got {status!r}")
            reason = value.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise ExpectationsError(f"{path}: [{key}] needs a non-empty reason")
            entries.append(Expectation(key, status, reason, str(value.get("evidence", ""))))
        return cls(entries, str(path))

    def lookup(self, check_id: str) -> Expectation | None:
        """The most specific entry covering `check_id`."""
        matches = [e for e in self.entries if e.covers(check_id)]
        return max(matches, key=lambda e: len(e.key)) if matches else None

    def stale(self, check_ids: list[str]) -> list[str]:
        """Entries that cover no collected check."""
        return [e.key for e in self.entries if not any(e.covers(c) for c in check_ids)]


def updated(existing: Expectations, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A new expectations table: one entry per failing check, old reasons kept; skips kept."""
    out: dict[str, Any] = {}
    for entry in existing.entries:
        if entry.status == "skip":
            out[entry.key] = _table(entry)
    for record in records:
        if record["status"] not in ("fail", "xfail"):
            continue
        old = existing.lookup(record["id"])
        if old is not None and old.status == "fail":
            out[old.key] = _table(old)
        else:
            message = (record.get("message") or "").strip().splitlines()
            out[record["id"]] = {"status": "fail",
                                 "reason": "TODO: explain (new failure)",
                                 "evidence": message[0][:300] if message else ""}
    return dict(sorted(out.items()))


def _table(entry: Expectation) -> dict[str, str]:
    table = {"status": entry.status, "reason": entry.reason}
    if entry.evidence:
        table["evidence"] = entry.evidence
    return table


def dump(table: dict[str, Any]) -> str:
    return tomli_w.dumps(table)

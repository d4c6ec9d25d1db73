"""Compare two implementations' end states check by check (`memconform diff`).

Normalization (the only place it is defined):

- UUIDs (hyphenated or in the simple 32-digit spelling, any case) found in both captures of
  a check stay as they are (ids the harness seeded); a UUID v7 whose random bits both sides
  have but whose time differs (the harness seeded it from each side's clock) becomes
  `<v7 now-120m 1a2b3c4d>`, its time made relative like other times; any other id only one
  side has (a session thread, an ownership token) becomes `<id-N>`, numbered by first
  appearance in that side's state;
- the two states are walked side by side: a key or value that is the same on both sides
  stays as it is (a time or id the harness seeded compares literally); only where they differ
  are both normalized before comparing again, and a key one side lacks is paired with the
  other side's key that normalizes to the same text;
- times become offsets from the check's harness clock, rounded to minutes: whole-second and
  millisecond integers within a year of it (older ones, e.g. read from a fixed UUIDv7, stay),
  ISO-8601 stamps (`2026-06-01T09:00:00+00:00`, `…Z`, `…T09-00-00` as in file names) →
  `<now+120m>`; the `YYYY/MM/DD/` directory a rollout file sits in, named for the same moment
  as the file, becomes `<day>/` once the file's stamp was made relative (a clock near midnight
  puts the same relative time on two days);
- temporary directories and ports were already normalized in the capture (`<tmp>`, `<port>`).

A difference is a path into the state with both values: rows by table and primary key
(`db["memories_1.sqlite"].jobs["memory_stage1|<thread id>"].status`), files by path
(`files["MEMORY.md"]`), requests by kind and number (`requests["stage1#1"].body.reasoning`),
answers by position (`answers[0].result`). A check that is an expected failure on either side
(`xfail`: its expectations file records the divergence, with evidence) has its differences
listed as known. Other differences the rules allow are declared in a TOML
file of `[[allow]]` entries: `checks` (globs over check ids), `where` (globs over paths; only
`*` and `?` are wild) and `reason`; an entry that matched nothing in a run is stale.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

UUID = re.compile(r"\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b", re.I)
STAMP = re.compile(r"\b(\d{4}-\d\d-\d\d)T(\d\d)[:-](\d\d)[:-](\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)?")
DAY_DIR = re.compile(r"\b\d{4}/\d\d/\d\d/(?=rollout-<now[+-]\d+m>)")
WINDOW_S = 365 * 86_400  # times the harness derives from its clock; older ones are absolute
NOT_RUN = {"unsupported", "not-implemented", "skip"}
EXPECTED_FAILURE = ("a known divergence: the check is an expected failure on side {side}, whose "
                    "expectations file records why")


class DiffError(ValueError):
    """An allowed-differences file or a capture cannot be used."""


def _offset(seconds: float, now_s: float) -> str:
    return f"<now{round((seconds - now_s) / 60):+d}m>"


def _stamp(match: re.Match[str], now_s: float) -> str:
    day, hour, minute, second, zone = match.groups()
    zone = "+00:00" if zone in (None, "Z") else zone
    try:
        moment = datetime.fromisoformat(f"{day}T{hour}:{minute}:{second}{zone}")
    except ValueError:
        return match.group(0)
    if abs(moment.timestamp() - now_s) >= WINDOW_S:
        return match.group(0)
    return _offset(moment.timestamp(), now_s)


class _Normalizer:
    def __init__(self, now_ms: int | None, shared_ids: set[str],
                 shared_tails: set[tuple[str, str]] | None = None) -> None:
        self.now_s = None if now_ms is None else now_ms / 1000
        self.shared = shared_ids
        self.tails = shared_tails or set()
        self.ids: dict[str, str] = {}

    def _id(self, match: re.Match[str]) -> str:
        value = match.group(0)
        canonical = _canonical(value)
        if canonical in self.shared:
            return value
        seeded = _v7_key(canonical, self.now_s)
        if seeded is not None and seeded in self.tails:
            # a v7 id the harness seeded from its clock: same random bits and the same time
            # relative to the clock on both sides
            return f"<v7 {seeded[0]} {seeded[1][1:9]}>"
        return self.ids.setdefault(canonical, f"<id-{len(self.ids) + 1}>")

    def text(self, value: str) -> str:
        value = UUID.sub(self._id, value)
        if self.now_s is not None:
            now_s = self.now_s
            value = DAY_DIR.sub("<day>/", STAMP.sub(lambda m: _stamp(m, now_s), value))
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, int) and not isinstance(value, bool) and self.now_s is not None:
            if abs(value - self.now_s) < WINDOW_S:
                return _offset(value, self.now_s)
            if abs(value / 1000 - self.now_s) < WINDOW_S:
                return _offset(value / 1000, self.now_s) + "ms"
        return value


def _canonical(uuid: str) -> str:
    """A UUID in its lowercase hyphenated form, whichever spelling it came in."""
    hexes = uuid.replace("-", "").lower()
    return f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"


def _ids(state: Any) -> set[str]:
    return {_canonical(u) for u in UUID.findall(json.dumps(state, sort_keys=True))}


def _v7_key(canonical: str, now_s: float | None) -> tuple[str, str] | None:
    """A UUID v7's time relative to the clock, and its version-and-random part."""
    hexes = canonical.replace("-", "")
    if hexes[12] != "7" or now_s is None:
        return None
    return _offset(int(hexes[:12], 16) / 1000, now_s)[1:-1], hexes[12:]


def _v7_keys(ids: set[str], now_ms: int | None) -> set[tuple[str, str]]:
    now_s = None if now_ms is None else now_ms / 1000
    return {k for k in (_v7_key(i, now_s) for i in ids) if k is not None}


def _tables(state: dict[str, Any], norm: _Normalizer) -> dict[str, Any]:
    """The state with each table's rows keyed by primary key (raw values)."""
    body = {k: v for k, v in state.items() if k != "now_ms"}
    dbs = body.get("db")
    if isinstance(dbs, dict):
        body["db"] = {name: {table: _keyed(data["key"], data["rows"], norm)
                             for table, data in tables.items()}
                      for name, tables in dbs.items()}
    return body


def _keyed(key: list[str], rows: list[dict[str, Any]], norm: _Normalizer) -> dict[str, Any]:
    """Rows by their primary key (`a|b` for a composite one); a table without one by position
    after sorting on normalized content."""
    if not key:
        ordered = sorted(rows, key=lambda r: json.dumps(norm.value(r), sort_keys=True))
        return {f"#{i}": row for i, row in enumerate(ordered)}
    return {"|".join(str(row.get(c)) for c in key): row for row in rows}


def _path(prefix: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", str(key)) and prefix:
        return f"{prefix}.{key}"
    if not prefix:
        return str(key)
    return f"{prefix}[{json.dumps(key)}]"


def differences(a: Any, b: Any, where: str = "", norms: tuple[_Normalizer, _Normalizer]
                | None = None) -> list[tuple[str, Any, Any]]:
    """Every leaf where `a` and `b` differ: (path, value in a, value in b), values
    normalized; a missing key or list element reads `<absent>`. Without normalizers the
    values compare as they are."""
    na, nb = norms if norms is not None else (None, None)
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        pairs = [(key, key, key) for key in set(a) & set(b)]
        norm_a = {(na.text(k) if na and isinstance(k, str) else k): k for k in set(a) - set(b)}
        norm_b = {(nb.text(k) if nb and isinstance(k, str) else k): k for k in set(b) - set(a)}
        pairs += [(shown, norm_a.get(shown), norm_b.get(shown))
                  for shown in set(norm_a) | set(norm_b)]
        for shown, key_a, key_b in sorted(pairs, key=lambda p: str(p[0])):
            out += differences(a[key_a] if key_a is not None else "<absent>",
                               b[key_b] if key_b is not None else "<absent>",
                               _path(where, shown), norms)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for index in range(max(len(a), len(b))):
            out += differences(a[index] if index < len(a) else "<absent>",
                               b[index] if index < len(b) else "<absent>", _path(where, index),
                               norms)
        return out
    if a == b:
        return []
    left = na.value(a) if na and a != "<absent>" else a
    right = nb.value(b) if nb and b != "<absent>" else b
    return [] if left == right else [(where, left, right)]


@dataclass
class Allowance:
    checks: list[str]
    where: list[str]
    reason: str
    used: int = 0

    def covers(self, check_id: str, path: str) -> bool:
        return (any(glob(c).fullmatch(check_id) for c in self.checks)
                and any(glob(w).fullmatch(path) for w in self.where))


def glob(text: str) -> re.Pattern[str]:
    """`*` any text, `?` one character, everything else literal (brackets and quotes too)."""
    return re.compile("".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch)
                              for ch in text), re.S)


def load_allowed(path: Path | None) -> list[Allowance]:
    if path is None:
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DiffError(f"{path}: cannot be read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise DiffError(f"{path}: not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise DiffError(f"{path}: not valid TOML: {exc}") from exc
    entries = data.get("allow", [])
    unknown = set(data) - {"allow"}
    if unknown or not isinstance(entries, list):
        raise DiffError(f"{path}: only [[allow]] entries are allowed (found {sorted(unknown)})")
    out = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or set(entry) != {"checks", "where", "reason"}:
            raise DiffError(f"{path}: allow entry {number} needs exactly checks, where and "
                            "reason")
        checks, where, reason = entry["checks"], entry["where"], entry["reason"]
        if (not isinstance(checks, list) or not isinstance(where, list) or not checks
                or not where or not all(isinstance(x, str) for x in checks + where)
                or not isinstance(reason, str) or not reason.strip()):
            raise DiffError(f"{path}: allow entry {number}: checks and where are non-empty "
                            "lists of globs, reason a non-empty text")
        out.append(Allowance(checks, where, reason.strip()))
    return out


@dataclass
class CheckDiff:
    id: str
    statuses: tuple[str, str]
    found: list[dict[str, Any]] = field(default_factory=list)  # where, a, b, allowed (reason)

    @property
    def undeclared(self) -> list[dict[str, Any]]:
        return [d for d in self.found if d["allowed"] is None]


def _show(value: Any) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 400 else text[:200] + f"…({len(text)} chars)…" + text[-150:]


def compare(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]],
            allowed: list[Allowance]) -> tuple[list[CheckDiff], list[str], list[str]]:
    """Per-check differences of the checks both sides ran (a check unsupported, not
    implemented or skipped on either side is left out); plus the ids only one side has."""
    results = []
    for check_id in sorted(set(a) & set(b)):
        if {a[check_id]["status"], b[check_id]["status"]} & NOT_RUN:
            continue  # a check that did not run on one side left nothing to compare
        left, right = a[check_id]["state"], b[check_id]["state"]
        ids_a, ids_b = _ids(left), _ids(right)
        shared = ids_a & ids_b
        tails = (_v7_keys(ids_a - shared, left.get("now_ms"))
                 & _v7_keys(ids_b - shared, right.get("now_ms")))
        norms = (_Normalizer(left.get("now_ms"), shared, tails),
                 _Normalizer(right.get("now_ms"), shared, tails))
        # ids are numbered by first appearance in each whole state, as `normalize` does
        body_a, body_b = _tables(left, norms[0]), _tables(right, norms[1])
        norms[0].value(body_a)
        norms[1].value(body_b)
        found = CheckDiff(check_id, (a[check_id]["status"], b[check_id]["status"]))
        expected = [side for side, got in zip("ab", found.statuses, strict=True)
                    if got == "xfail"]
        for where, x, y in differences(body_a, body_b, "", norms):
            reason = None
            if expected:
                found.found.append({"where": where, "a": _show(x), "b": _show(y),
                                    "allowed": EXPECTED_FAILURE.format(side=expected[0])})
                continue
            for allowance in allowed:
                if allowance.covers(check_id, where):
                    allowance.used += 1
                    reason = allowance.reason
                    break
            found.found.append({"where": where, "a": _show(x), "b": _show(y),
                                "allowed": reason})
        results.append(found)
    return results, sorted(set(a) - set(b)), sorted(set(b) - set(a))


def summary(results: list[CheckDiff], labels: tuple[str, str], allowed: list[Allowance],
            only: tuple[list[str], list[str]]) -> dict[str, Any]:
    """The JSON form of a comparison."""
    return {
        "a": labels[0], "b": labels[1], "checks": len(results),
        "checks_with_undeclared": sum(1 for r in results if r.undeclared),
        "undeclared": sum(len(r.undeclared) for r in results),
        "allowed": sum(len(r.found) - len(r.undeclared) for r in results),
        "stale_allowances": [{"checks": x.checks, "where": x.where, "reason": x.reason}
                             for x in allowed if x.used == 0],
        "only_in_a": only[0], "only_in_b": only[1],
        "results": [{"id": r.id, "status_a": r.statuses[0], "status_b": r.statuses[1],
                     "differences": r.found} for r in results if r.found],
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [f"# Differences: {data['a']} vs {data['b']}", "",
             f"{data['checks']} checks compared; {data['undeclared']} undeclared differences "
             f"in {data['checks_with_undeclared']} checks, {data['allowed']} allowed.", ""]
    for entry in data["stale_allowances"]:
        lines.append(f"- stale allowance (matched nothing): {entry['checks']} {entry['where']}")
    for result in data["results"]:
        lines += ["", f"## `{result['id']}` ({result['status_a']} / {result['status_b']})", "",
                  "| where | a | b | allowed |", "|---|---|---|---|"]
        for d in result["differences"]:
            cells = [d["where"], str(d["a"]), str(d["b"]), d["allowed"] or "**no**"]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", "⏎")
                                           for c in cells) + " |")
    return "\n".join(lines) + "\n"


def html(data: dict[str, Any]) -> str:
    """The comparison as one self-contained page (undeclared differences first in view)."""
    from memconform.htmlreport import environment

    return environment().get_template("diff.html.j2").render(data=data)

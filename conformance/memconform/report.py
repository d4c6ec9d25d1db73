"""Run reports: `report.jsonl` (header, one record per check, footer), `junit.xml`,
`summary.md` and `report.html`, all from the same records so that every file gives the same
counts."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sqlite3
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from memconform import PROTOCOL_VERSION, __version__, junit

STATUSES = ("pass", "fail", "error", "xfail", "xpass", "unsupported", "not-implemented",
            "skip")
NOT_RUN = ("unsupported", "not-implemented", "skip")
LEVELS = ("MUST", "SHOULD", "MAY")
EXIT_OK, EXIT_NONCONFORMANT, EXIT_USAGE, EXIT_HARNESS = 0, 1, 2, 3


class ReportError(ValueError):
    """A report file that is missing, unreadable or incomplete."""


REPORT_FILES = ("report.jsonl", "junit.xml", "summary.md", "report.html")


class Reporter:
    """Collects check records on the controller process and writes the report files.

    `start()` removes every report file of an earlier run and writes the header; each record
    is appended (and flushed) as its check finishes, so a run killed outright still leaves
    what it saw, with no footer. `write()` rewrites `report.jsonl` sorted by id with its
    footer, then `junit.xml`, `summary.md` and `report.html`, all from the same records.
    """

    def __init__(self, out_dir: Path, config: dict[str, Any]) -> None:
        self.out_dir = out_dir
        self.config = config
        self.implementation: dict[str, Any] = {"spec": config.get("impl")}
        self.records: list[dict[str, Any]] = []
        self.stale: list[str] = []
        self.started = time.time()
        self.selected: int | None = None
        self.interrupted: str | None = None
        self._stream: Any = None

    def prepare(self) -> None:
        """Make the directory and remove the files of an earlier run (before any check)."""
        remove_previous(self.out_dir)
        probe = self.out_dir / ".memconform-write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()

    def start(self) -> None:
        """Open `report.jsonl` and write the header."""
        self._stream = (self.out_dir / "report.jsonl").open("w", encoding="utf-8")
        self._emit(self.header())

    def _emit(self, line: dict[str, Any]) -> None:
        if self._stream is not None:
            self._stream.write(json.dumps(line) + "\n")
            self._stream.flush()

    def add(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        self._emit(record)

    def header(self) -> dict[str, Any]:
        return {"type": "header", "suite": "memconform", "suite_version": __version__,
                "protocol_version": PROTOCOL_VERSION, "started_at": round(self.started, 3),
                "implementation": self.implementation, "config": self.config,
                "environment": {"python": platform.python_version(),
                                "sqlite": sqlite3.sqlite_version,
                                "platform": platform.platform(), "cpus": os.cpu_count()}}

    def footer(self) -> dict[str, Any]:
        ran = len(self.records)
        # unknown (null) only when the run stopped before its collection finished
        selected = self.selected
        if selected is None and self.interrupted is None:
            selected = ran
        complete = self.interrupted is None and ran == selected
        footer = {"type": "footer", "counts": counts(self.records),
                  "by_area": by_area(self.records), "stale_expectations": self.stale,
                  "duration_s": round(time.time() - self.started, 3),
                  "selected": selected, "ran": ran, "complete": complete}
        if not complete:
            footer["reason"] = self.interrupted or f"only {ran} of {selected} checks reported"
        return footer

    def write(self) -> Path:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / "report.jsonl"
        records = sorted(self.records, key=lambda r: r["id"])
        lines = [self.header(), *records, self.footer()]
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        tmp.replace(path)
        write_derived(self.out_dir, lines[0], records, lines[-1])
        return path


def remove_previous(out_dir: Path) -> None:
    """Make the directory and remove an earlier run's report files and bundles."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in REPORT_FILES:
        (out_dir / name).unlink(missing_ok=True)
    shutil.rmtree(out_dir / "bundles", ignore_errors=True)


def write_derived(out_dir: Path, header: dict[str, Any], records: list[dict[str, Any]],
                  footer: dict[str, Any]) -> None:
    """`junit.xml`, `summary.md` and `report.html`, from the lines of `report.jsonl`."""
    from memconform import htmlreport

    reason = None if footer.get("complete") else footer.get("reason", "no footer")
    junit.write(out_dir / "junit.xml", "memconform", records, footer.get("duration_s", 0.0),
                complete=bool(footer.get("complete")))
    (out_dir / "summary.md").write_text(
        markdown(header, records, footer.get("stale_expectations", []), reason),
        encoding="utf-8")
    htmlreport.write(out_dir / "report.html", header, records, footer, incomplete=reason)


def counts(records: list[dict[str, Any]]) -> dict[str, int]:
    tally = Counter(r["status"] for r in records)
    return {s: tally.get(s, 0) for s in STATUSES}


def group(records: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record[key]].append(record)
    return dict(sorted(grouped.items()))


def by_area(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    return {area: counts(rs) for area, rs in group(records, "area").items()}


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a report; a last line cut off by a killed run is left out."""
    try:
        raw = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError as exc:
        raise ReportError(f"{path}: no such report") from exc
    except (UnicodeDecodeError, IsADirectoryError) as exc:
        raise ReportError(f"{path}: not a JSON-lines report ({exc})") from exc
    lines = []
    for number, line in enumerate(raw, 1):
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(raw):
                break
            raise ReportError(f"{path}:{number}: not a JSON-lines report: {exc}") from exc
    if not lines or not isinstance(lines[0], dict) or lines[0].get("type") != "header":
        raise ReportError(f"{path}: no header line")
    return lines


def incomplete_reason(lines: list[dict[str, Any]]) -> str | None:
    """Why the report does not cover its whole run (None: it does)."""
    last = lines[-1]
    if last.get("type") != "footer":
        seen = sum(1 for line in lines if line.get("type") == "check")
        return f"no footer after {seen} check records (the run was killed)"
    if not last.get("complete"):
        selected = last.get("selected")
        return (f"{last.get('reason', 'the run stopped early')} ({last.get('ran', '?')} of "
                f"{'?' if selected is None else selected} selected checks ran)")
    return None


def load(path: Path, *, allow_incomplete: bool = False
         ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Header, check records and footer; an incomplete report is an error unless allowed
    (then a killed run's missing footer is `{}`)."""
    lines = read_lines(path)
    reason = incomplete_reason(lines)
    if reason is not None and not allow_incomplete:
        raise ReportError(f"{path}: incomplete: {reason}")
    footer = lines[-1] if lines[-1].get("type") == "footer" else {}
    return lines[0], [r for r in lines[1:] if r.get("type") == "check"], footer


def exit_code(records: list[dict[str, Any]], stale: list[str], strict: bool) -> int:
    tally = counts(records)
    if not records:
        return EXIT_USAGE
    if tally["error"]:
        return EXIT_HARNESS
    if tally["fail"] or tally["xpass"] or (strict and stale):
        return EXIT_NONCONFORMANT
    return EXIT_OK


def agreement(records: list[dict[str, Any]]) -> tuple[int, int]:
    """(passed, run): checks that ran to a verdict (not unsupported, not-implemented or
    skipped)."""
    ran = [r for r in records if r["status"] not in NOT_RUN]
    return sum(r["status"] == "pass" for r in ran), len(ran)


def conformance(records: list[dict[str, Any]]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per area, per level: (passed, run); areas with nothing run are left out."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for area, rs in group(records, "area").items():
        levels = {level: agreement([r for r in rs if r["level"] == level]) for level in LEVELS}
        levels = {level: pr for level, pr in levels.items() if pr[1]}
        if levels:
            out[area] = levels
    return out


def conformance_lines(records: list[dict[str, Any]]) -> list[str]:
    """`read: MUST 204/204, SHOULD 90/91` per area; then the areas not implemented."""
    figures = conformance(records)
    lines = [f"{area}: " + ", ".join(f"{level} {p}/{r}" for level, (p, r) in levels.items())
             for area, levels in figures.items()]
    absent = sorted({r["area"] for r in records if r["status"] == "not-implemented"}
                    - set(figures))
    if absent:
        lines.append("not implemented: " + ", ".join(absent))
    return lines


def markdown(header: dict[str, Any], records: list[dict[str, Any]], stale: list[str],
             incomplete: str | None = None) -> str:
    impl = header["implementation"]
    name = f"{impl.get('name', impl.get('spec'))} {impl.get('version', '')}".strip()
    passed, ran = agreement(records)
    lines = [f"# memconform {header['suite_version']} — {name}", "",
             f"Protocol v{header['protocol_version']}; {len(records)} checks; "
             f"agreement {passed}/{ran} checks run.", ""]
    if incomplete:
        lines += [f"**Incomplete run: {incomplete}. No verdict.**", ""]
    if impl.get("scope") is not None:
        lines += [f"Declared scope: {', '.join(impl['scope']) or 'nothing'}.", ""]
    lines += ["| area | " + " | ".join(STATUSES) + " | total | passed / run |",
              "|---|" + "---:|" * (len(STATUSES) + 2)]
    areas = group(records, "area")
    for area, tally in by_area(records).items():
        p, r = agreement(areas[area])
        lines.append(f"| {area} | " + " | ".join(str(tally[s]) for s in STATUSES)
                     + f" | {sum(tally.values())} | {p}/{r} |")
    total = counts(records)
    lines.append("| **all** | " + " | ".join(str(total[s]) for s in STATUSES)
                 + f" | {len(records)} | {passed}/{ran} |")
    by_level = group(records, "level")
    lines += ["", "| level | passed / run |", "|---|---:|"]
    for level in LEVELS:
        if by_level.get(level):
            p, r = agreement(by_level[level])
            lines.append(f"| {level} | {p}/{r} |")
    lines += ["", "## Conformance by area", ""] + [f"- {x}" for x in conformance_lines(records)]
    bad = [r for r in records if r["status"] in ("fail", "error", "xpass")]
    if bad:
        lines += ["", "## Unexpected results", ""]
        for record in bad:
            lines.append(f"- `{record['id']}` **{record['status']}**: "
                         f"{record.get('sentence') or ''}")
            for label in ("expected", "actual"):
                if record.get(label) is not None:
                    value = record[label].split("\n", 1)[0][:200]
                    lines.append(f"  - {label}: `{value}`")
            if record.get("repro"):
                lines.append(f"  - repro: `{record['repro']}`")
    if stale:
        lines += ["", "## Stale expectations", ""] + [f"- `{key}`" for key in stale]
    return "\n".join(lines) + "\n"

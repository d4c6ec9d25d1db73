"""Which checks run: by area, id, glob over ids, smoke; unknown ids refused with near ones."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from memconform.registry import AREAS, id_covers

PROFILES = {"local": "memconform.checks", "cloud": "memconform.cloud_checks"}
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_STARTUP_TIMEOUT_S = 60.0


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("memconform", "memconform conformance checks")
    group.addoption("--impl", default="ref",
                    help="implementation: ref, python:MODULE:FACTORY, exec:COMMAND")
    group.addoption("--expectations", type=Path, default=None,
                    help="TOML file of checks this implementation is known to fail")
    group.addoption("--strict-expectations", action="store_true",
                    help="stale expectation entries fail the run")
    group.addoption("--report-dir", type=Path, default=None,
                    help="write report.jsonl, junit.xml and summary.md here")
    group.addoption("--area", action="append", default=[], choices=sorted(AREAS),
                    help="run only checks of this area (repeatable)")
    group.addoption("--smoke-checks", action="store_true", help="run only the smoke checks")
    group.addoption("--check-id", dest="check_ids", action="append", default=[],
                    help="run only this check id, or every case of it (repeatable)")
    group.addoption("--match", dest="match", action="append", default=[],
                    help="run only check ids matching this glob (`*`, `?`) or substring "
                         "(repeatable)")
    group.addoption("--adapter-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help="seconds to wait for any one protocol response")
    group.addoption("--startup-timeout", type=float, default=DEFAULT_STARTUP_TIMEOUT_S,
                    help="seconds a startup may take (sent as its timeout_s; the harness waits "
                         "30 s longer for the answer); --adapter-timeout covers every other "
                         "request")
    group.addoption("--impl-seed", type=int, default=0, help="seed sent to the implementation")
    group.addoption("--profile", default="local", choices=sorted(PROFILES),
                    help="local: a Codex-style pipeline over the adapter protocol; cloud: a "
                         "control-plane service over HTTP")
    group.addoption("--cloud-db", default="sqlite",
                    help="cloud profile, bundled service: sqlite, postgresql or a SQLAlchemy URL")
    group.addoption("--progress", choices=("pytest", "lines", "dots", "live"), default="pytest",
                    help="per-check output: pytest's own, one line per check id, one "
                         "character per check, or a live display for a terminal")
    group.addoption("--mc-traceback", action="store_true",
                    help="keep the full traceback of failing checks in records and output")
    group.addoption("--keep", type=Path, default=None,
                    help="write every check's bundle here (failures always get one in the "
                         "report directory)")
    group.addoption("--no-clock-inject", action="store_true",
                    help="use the wall clock even where the implementation takes an injected "
                         "one (checks that need clock.inject report unsupported)")
    group.addoption("--shard", default=None, metavar="K/N",
                    help="run only shard K of N of the selected checks (see --shard-durations)")
    group.addoption("--shard-durations", type=Path, default=None, metavar="REPORT",
                    help="an earlier report.jsonl whose check durations balance the shards")
    group.addoption("--adapter-per-check", action="store_true",
                    help="start the implementation for every check instead of once per process")
    group.addoption("--also-impl", action="append", default=[], metavar="SPEC",
                    help="mutation testing: run every check that uses the implementation once "
                         "more against SPEC too (parameter `also-N`; checks with snapshots "
                         "only against --impl); needs --adapter-per-check")
    group.addoption("--capture-state", type=Path, default=None,
                    help="write every check's end state (rows, memory files, requests, "
                         "answers) here as <check id>.json, for memconform diff")


def pattern(text: str) -> re.Pattern[str]:
    """A glob over check ids where only `*` and `?` are wildcards (brackets are literal);
    without a wildcard the text matches anywhere in the id."""
    if "*" not in text and "?" not in text:
        return re.compile(".*" + re.escape(text) + ".*", re.S)
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in text)
    return re.compile(body, re.S)


def selected(check_id: str, area: str, smoke: bool, *, areas: set[str], smoke_only: bool,
             wanted: list[str], matches: list[re.Pattern[str]]) -> bool:
    return not ((areas and area not in areas) or (smoke_only and not smoke)
                or (wanted and not any(id_covers(w, check_id) for w in wanted))
                or (matches and not any(m.fullmatch(check_id) for m in matches)))


def unknown_ids(wanted: Iterable[str], known: Iterable[str]) -> list[str]:
    """One line per wanted id that names no check, with the nearest known ids."""
    known = sorted(set(known))
    bases = sorted({k.split("[", 1)[0] for k in known})
    problems = []
    for key in wanted:
        if any(id_covers(key, k) for k in known):
            continue
        near = difflib.get_close_matches(key, sorted({*bases, *known}), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        problems.append(f"unknown check id {key!r}{hint}")
    return problems

"""SPEC.md cites only evidence held in the repository, and every cited section exists."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SPEC = (REPO / "conformance" / "SPEC.md").read_text("utf-8")
EVIDENCE = REPO / "conformance" / "evidence"
SUMMARY = (EVIDENCE / "codex-0.144.6.md").read_text("utf-8")


def test_cited_evidence_files_exist() -> None:
    cited = set(re.findall(r"`(evidence/[^`…]+)`", SPEC))
    assert "evidence/codex-0.144.6.md" in cited
    missing = sorted(p for p in cited if not (REPO / "conformance" / p).exists())
    assert missing == []


def test_cited_sections_exist() -> None:
    sections = {int(n) for n in re.findall(r"(?m)^## (\d+)\. ", SUMMARY)}
    cited: set[int] = set()
    for line in SPEC.splitlines():
        if "evidence/codex-0.144.6.md" in line:
            for first, last in re.findall(r"§(\d+)(?:\u2013(\d+))?", line):
                cited.update(range(int(first), int(last or first) + 1))
    assert cited and cited <= sections, sorted(cited - sections)


def test_nothing_outside_the_repository_is_cited() -> None:
    for marker in ("shared/", "REPORT.md", "probe report", "scenarios.py"):
        assert marker not in SPEC, marker


def test_request_copies_hold_no_fixed_prompt_text() -> None:
    """Instructions and tool descriptions of the captured requests are placeholders."""
    def descriptions(value: object) -> list[object]:
        if isinstance(value, dict):
            return [value["description"], *[d for v in value.values() for d in descriptions(v)]] \
                if "description" in value else [d for v in value.values()
                                                 for d in descriptions(v)]
        if isinstance(value, list):
            return [d for v in value for d in descriptions(v)]
        return []

    copies = sorted((EVIDENCE / "requests").glob("*.json"))
    assert len(copies) == 5
    for path in copies:
        body = json.loads(path.read_text("utf-8"))["body"]
        assert body["instructions"].startswith("<omitted: "), path.name
        for text in descriptions(body["tools"]):
            assert isinstance(text, str) and text.startswith("<omitted: "), path.name


def test_the_wheel_ships_the_evidence() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert include.get("conformance/evidence") == "memconform/_docs/evidence"

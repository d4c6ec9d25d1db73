"""The checked-in MANIFEST.json and SPEC.md agree with the collected checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memconform import protocol, resources
from memconform.listing import collect_checks, manifest
from memconform.spec import SpecError, load_rules

RANK = {"MAY": 0, "SHOULD": 1, "MUST": 2}


@pytest.fixture(scope="module")
def checks() -> list[dict[str, Any]]:
    return collect_checks()


def test_manifest_matches_collected_checks(checks: list[dict[str, Any]]) -> None:
    stored = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
    assert stored == manifest(checks), (
        "conformance/MANIFEST.json is stale: regenerate with "
        "`memconform list --json > conformance/MANIFEST.json`")


def test_every_rule_has_a_check_and_every_check_a_known_rule(
        checks: list[dict[str, Any]]) -> None:
    rules = load_rules()
    named = {r for c in checks for r in c["rules"]}
    assert sorted(set(rules) - named) == [], "rules without a check"
    assert sorted(named - set(rules)) == [], "checks naming unknown rules"


def test_check_level_never_exceeds_its_rules(checks: list[dict[str, Any]]) -> None:
    rules = load_rules()
    for c in checks:
        top = max(RANK[rules[r].level] for r in c["rules"])
        assert RANK[str(c["level"])] <= top, c["id"]


def test_check_release_is_its_rules_latest_since(checks: list[dict[str, Any]]) -> None:
    """A check applies from the latest release in which one of its rules begins."""
    rules = load_rules()
    assert any(r.since for r in rules.values()), "no rule begins after the baseline"
    for c in checks:
        sinces = [since for r in c["rules"] if (since := rules[r].since) is not None]
        latest = max(sinces, key=lambda v: tuple(map(int, v.split(".")))) if sinces else None
        assert c["codex_since"] == latest, c["id"]


def test_check_layout_is_its_rules_layout(checks: list[dict[str, Any]]) -> None:
    """A check naming a rule of one memory layout applies to that layout only; a check of
    rules of both layouts may still observe through one layout's files (raw_memories.md)."""
    rules = load_rules()
    assert any(r.layout for r in rules.values()), "no rule is about one layout"
    for c in checks:
        layouts = {layout for r in c["rules"] if (layout := rules[r].layout) is not None}
        assert len(layouts) <= 1, c["id"]
        if layouts:
            assert c["layout"] == layouts.pop(), c["id"]


def test_spec_parses_a_since_release(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text("### P2-RUN-99 — a\nLevel: MUST · Since: Codex 0.155.0 · Evidence: binary\n"
                    "text\n### P2-RUN-98 — b\nLevel: SHOULD · Evidence: design\n",
                    encoding="utf-8")
    rules = load_rules(spec)
    assert (rules["P2-RUN-99"].since, rules["P2-RUN-99"].evidence) == ("0.155.0", "binary")
    assert (rules["P2-RUN-98"].since, rules["P2-RUN-98"].level) == (None, "SHOULD")
    spec.write_text("### P2-RUN-99 — a\nLevel: MUST · Since: 0.155.0 · Evidence: x\n",
                    encoding="utf-8")
    with pytest.raises(SpecError, match=r"Since: Codex X\.Y\.Z"):
        load_rules(spec)


def test_spec_parses_a_layout(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text("### P2-RUN-99 — a\nLevel: MUST · Since: Codex 0.155.0 · Layout: v2 · "
                    "Evidence: binary\ntext\n### P2-RUN-98 — b\nLevel: MUST · Layout: v1 · "
                    "Evidence: x\n", encoding="utf-8")
    rules = load_rules(spec)
    assert (rules["P2-RUN-99"].since, rules["P2-RUN-99"].layout) == ("0.155.0", "v2")
    assert (rules["P2-RUN-98"].since, rules["P2-RUN-98"].layout) == (None, "v1")
    spec.write_text("### P2-RUN-99 — a\nLevel: MUST · Layout: v3 · Evidence: x\n",
                    encoding="utf-8")
    with pytest.raises(SpecError, match=r"Layout: v1\|v2"):
        load_rules(spec)


def test_must_checks_need_only_core_capabilities(checks: list[dict[str, Any]]) -> None:
    vocabulary = protocol.capabilities()
    known = set(vocabulary["core"]) | set(vocabulary["optional"])
    for c in checks:
        needs = set(c["needs"])
        assert needs <= known, f"{c['id']} needs unknown capabilities {needs - known}"
        if c["level"] == "MUST":
            assert not needs & set(vocabulary["optional"]), (
                f"{c['id']} is MUST but needs an optional capability; it could be unsupported")


def test_smoke_set_is_small_and_core(checks: list[dict[str, Any]]) -> None:
    smoke = [c for c in checks if c["smoke"]]
    assert 2 <= len(smoke) <= 6
    assert all(c["level"] == "MUST" for c in smoke)


def test_spec_parser_rejects_malformed_rules(tmp_path: Path) -> None:
    bad = tmp_path / "SPEC.md"
    bad.write_text("### CFG-01 — a rule\nno level line\n", encoding="utf-8")
    with pytest.raises(SpecError, match="Level"):
        load_rules(bad)
    bad.write_text("### CFG-01 — a\nLevel: MUST · Evidence: x\n### CFG-01 — b\n"
                   "Level: MUST · Evidence: y\n", encoding="utf-8")
    with pytest.raises(SpecError, match="twice"):
        load_rules(bad)
    bad.write_text("### not an id\n", encoding="utf-8")
    with pytest.raises(SpecError, match="heading"):
        load_rules(bad)

"""`memconform explain ID|RULE`: a rule's text and the checks, cases and data that pin it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from memconform import resources
from memconform.registry import id_covers
from memconform.selection import unknown_ids
from memconform.spec import Rule, load_rules


class ExplainError(ValueError):
    """The target names no rule and no check."""


def _checks() -> list[dict[str, Any]]:
    manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
    return list(manifest["checks"])


def case_data(case: str) -> list[tuple[str, Any]]:
    """Fixture entries whose `id` is `case`: (fixture file, the entry)."""
    found: list[tuple[str, Any]] = []
    root = resources.fixtures_dir()
    for path in sorted(root.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        _find(data, case, path.relative_to(root).as_posix(), found)
    return found


def _find(node: Any, case: str, where: str, found: list[tuple[str, Any]]) -> None:
    if isinstance(node, dict):
        if node.get("id") == case:
            found.append((where, node))
            return
        if isinstance(node.get(case), dict):
            found.append((where, node[case]))
        for value in node.values():
            _find(value, case, where, found)
    elif isinstance(node, list):
        for value in node:
            _find(value, case, where, found)


def _rule_text(rule: Rule) -> list[str]:
    return [f"{rule.id} — {rule.title}", f"Level: {rule.level} · Evidence: {rule.evidence}",
            "", rule.text, ""]


def _run_command(impl: str, check_id: str, profile: str) -> str:
    parts = ["memconform", "run", "--impl", impl]
    if profile != "local":
        parts += ["--profile", profile]
    return shlex.join([*parts, "--id", check_id])


def explain_text(target: str, impl: str = "ref") -> str:
    rules = load_rules()
    checks = _checks()
    if target in rules:
        pinned = [c for c in checks if target in c["rules"]]
        lines = _rule_text(rules[target])
        lines.append(f"Pinned by {len(pinned)} check record(s):" if pinned
                     else "No check pins this rule.")
        for base in sorted({c["check"] for c in pinned}):
            records = [c for c in pinned if c["check"] == base]
            first = records[0]
            lines.append(f"  {base}  ({first['level']}, {first['area']}; "
                         f"{len(records)} case(s)) {first['title']}")
            lines.append(f"    run: {_run_command(impl, base, first['profile'])}")
        return "\n".join(lines).rstrip() + "\n"
    matching = [c for c in checks if id_covers(target, c["id"])]
    if not matching:
        problems = unknown_ids([target], [c["id"] for c in checks] + list(rules))
        raise ExplainError(problems[0] if problems else f"{target!r} names no check or rule")
    bases = sorted({c["check"] for c in matching})
    if len(bases) > 1:
        lines = [f"{target} covers {len(bases)} checks:"]
        for base in bases:
            one = next(c for c in matching if c["check"] == base)
            lines.append(f"  {base}  ({one['level']}, rules {', '.join(one['rules'])}) "
                         f"{one['title']}")
        lines.append(f"Run: {_run_command(impl, target, matching[0]['profile'])}")
        return "\n".join(lines) + "\n"
    first = matching[0]
    lines = [f"{first['check']} — {first['title']}",
             f"Level: {first['level']} · area: {first['area']} · profile: {first['profile']}"
             f" · since {first['since']}",
             "Needs: " + (", ".join(first["needs"]) or "only the core capabilities"), ""]
    for rule_id in first["rules"]:
        rule = rules.get(rule_id)
        lines += _rule_text(rule) if rule else [f"{rule_id}: not in SPEC.md", ""]
    cases = [c["id"] for c in matching if "[" in c["id"]]
    if cases:
        lines.append(f"Cases ({len(cases)}):")
        for case_id in cases:
            case = case_id.split("[", 1)[1].rstrip("]")
            lines.append(f"  {case_id}")
            for where, data in case_data(case) if len(cases) <= 20 else []:
                body = json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\n      ")
                lines.append(f"    fixture {Path(where)}:\n      {body}")
        lines.append("")
    lines.append(f"Run: {_run_command(impl, target, first['profile'])}")
    return "\n".join(lines).rstrip() + "\n"

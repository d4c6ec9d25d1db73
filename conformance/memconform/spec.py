"""Parse the rules of SPEC.md: `### ID — title` headings followed by a `Level:` line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memconform.resources import doc

HEADING = re.compile(r"^### ([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{2}) — (.+)$")
LEVEL = re.compile(r"^Level: (MUST|SHOULD|MAY|RETIRED) "
                   r"(?:· Since: Codex (\d+\.\d+\.\d+) )?(?:· Layout: (v1|v2) )?"
                   r"· Evidence: (.+)$")


class SpecError(ValueError):
    """SPEC.md does not follow the rule format."""


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    level: str
    evidence: str
    text: str = ""
    since: str | None = None  # the Codex release the rule begins in (None: the baseline)
    layout: str | None = None  # the one memory layout the rule is about (None: both)


def load_rules(path: Path | None = None) -> dict[str, Rule]:
    source = path or doc("SPEC.md")
    lines = source.read_text(encoding="utf-8").splitlines()
    rules: dict[str, Rule] = {}
    for number, line in enumerate(lines):
        heading = HEADING.match(line)
        if heading is None:
            if line.startswith("### "):
                raise SpecError(f"{source}:{number + 1}: heading is not `### ID — title`")
            continue
        rule_id, title = heading.groups()
        level = LEVEL.match(lines[number + 1]) if number + 1 < len(lines) else None
        if level is None:
            raise SpecError(f"{source}:{number + 2}: rule {rule_id} needs a `Level: … "
                            "[· Since: Codex X.Y.Z] [· Layout: v1|v2] · Evidence: …` line")
        if rule_id in rules:
            raise SpecError(f"{source}:{number + 1}: rule {rule_id} defined twice")
        rules[rule_id] = Rule(rule_id, title, level.group(1), level.group(4),
                              _prose(lines, number + 2), level.group(2), level.group(3))
    return rules


def _prose(lines: list[str], start: int) -> str:
    """The rule's text: the lines after its `Level:` line, up to the next heading."""
    end = start
    while end < len(lines) and not lines[end].startswith("#"):
        end += 1
    return "\n".join(lines[start:end]).strip()

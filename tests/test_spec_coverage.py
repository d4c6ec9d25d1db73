"""SPEC's `Covered:` lines cite only checks and cases that exist."""

from __future__ import annotations

import json
import re

from memconform import resources
from memconform.selection import pattern

PREFIXES = ("p1.", "p2.", "read.", "config.", "startup.", "store.", "tokens.", "protocol.")
# a check id, possibly with a bracketed case list such as config.clamp[*-bound, *-zero]
_ALTERNATIVES = "|".join(re.escape(p) for p in PREFIXES)
CITED = re.compile(rf"\b((?:{_ALTERNATIVES})[a-z0-9.-]+[a-z0-9])(\[[^\]]*\])?")


def covered_blocks() -> list[str]:
    text = resources.doc("SPEC.md").read_text(encoding="utf-8")
    return [m.group(0) for m in re.finditer(r"^Covered:.*?(?=\n\n|\n#|\Z)", text, re.M | re.S)]


def test_every_cited_check_and_case_exists() -> None:
    manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
    ids = [c["id"] for c in manifest["checks"]]
    blocks = covered_blocks()
    assert len(blocks) > 50, "SPEC lost its Covered lines"
    missing = []
    for block in blocks:
        flat = " ".join(block.split())
        for base, cases in CITED.findall(flat):
            if not cases:
                if not any(i == base or i.startswith(base + "[") or i.startswith(base + ".")
                           for i in ids):
                    missing.append(base)
                continue
            for case in re.sub(r"\s*\([^)]*\)", "", cases[1:-1]).split(","):
                glob = pattern(f"{base}[{case.strip()}]")
                if not any(glob.fullmatch(i) for i in ids):
                    missing.append(f"{base}[{case.strip()}]")
    assert missing == [], f"Covered lines cite checks or cases that do not exist: {missing}"

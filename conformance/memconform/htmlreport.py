"""`report.html`: one self-contained page for a run (inline CSS and JS, no network), rendered
with Jinja2 from the same header, records and footer as the other report files."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from memconform import report as rep
from memconform.spec import Rule, SpecError, load_rules

BAR_STATUSES = ("pass", "fail", "error", "xfail", "xpass", "unsupported", "not-implemented",
                "skip")


def environment() -> Environment:
    env = Environment(loader=PackageLoader("memconform", "templates"),
                      autoescape=select_autoescape(("html", "j2")), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["when"] = lambda s: dt.datetime.fromtimestamp(
        float(s), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return env


def _rules() -> dict[str, Rule]:
    try:
        return load_rules()
    except (SpecError, FileNotFoundError):
        return {}


def context(header: dict[str, Any], records: list[dict[str, Any]], footer: dict[str, Any],
            *, incomplete: str | None = None) -> dict[str, Any]:
    """Everything the template shows, computed here so the template only lays it out."""
    impl = header["implementation"]
    passed, ran = rep.agreement(records)
    areas = rep.group(records, "area")
    matrix = []
    for area, tally in rep.by_area(records).items():
        total = sum(tally.values()) or 1
        p, r = rep.agreement(areas[area])
        levels = {level: rep.agreement([x for x in areas[area] if x["level"] == level])
                  for level in rep.LEVELS}
        matrix.append({"area": area, "counts": tally, "total": sum(tally.values()),
                       "passed": p, "run": r,
                       "levels": {k: v for k, v in levels.items() if v[1] or v[0]},
                       "bar": [(s, 100 * tally[s] / total) for s in BAR_STATUSES if tally[s]]})
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        for rule in record["rules"]:
            by_rule[rule].append(record)
    known = _rules()
    cloud = impl.get("profile") == "cloud"
    rules: list[dict[str, Any]] = []
    for rid in sorted(set(known) | set(by_rule)):
        checks = sorted(by_rule.get(rid, []), key=lambda r: str(r["id"]))
        if checks or rid.startswith("CLOUD-") == cloud:
            rule = known.get(rid)
            rules.append({"id": rid, "title": rule.title if rule else "",
                          "level": rule.level if rule else "", "checks": checks})
    return {
        "title": f"{impl.get('name', impl.get('spec'))} {impl.get('version', '')}".strip(),
        "header": header, "impl": impl, "footer": footer, "records": records,
        "failing": [r for r in records if r["status"] in ("fail", "error", "xpass")],
        "passed": passed, "ran": ran, "matrix": matrix, "rules": rules,
        "statuses": rep.STATUSES, "levels": rep.LEVELS,
        "areas": sorted(areas), "conformance": rep.conformance_lines(records),
        "incomplete": incomplete, "duration_s": footer.get("duration_s"),
    }


def render(header: dict[str, Any], records: list[dict[str, Any]], footer: dict[str, Any],
           *, incomplete: str | None = None) -> str:
    template = environment().get_template("report.html.j2")
    return template.render(**context(header, records, footer, incomplete=incomplete))


def write(path: Path, header: dict[str, Any], records: list[dict[str, Any]],
          footer: dict[str, Any], *, incomplete: str | None = None) -> None:
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render(header, records, footer, incomplete=incomplete), encoding="utf-8")
    tmp.replace(path)

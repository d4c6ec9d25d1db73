"""`memconform compare`: reports of implementations or runs side by side.

The first report is the baseline; every other report is compared with it check by check:
- a regression: `pass` there, `fail` or `error` here;
- a fix: `fail` or `error` there, `pass` here;
- added / removed: a check id only one of the two reports has;
- an expectation change: the check's expectation entry (key, status, reason) differs;
- any other status change (e.g. `pass` → `unsupported`).
With more than two reports the matrix of checks by reports, grouped by area, shows every
status.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform import report as rep

GOOD = ("pass",)
BAD = ("fail", "error")


class CompareError(ValueError):
    """Reports that cannot be compared."""


@dataclass
class Side:
    label: str
    path: str
    header: dict[str, Any]
    records: dict[str, dict[str, Any]]


def layout_of(header: dict[str, Any]) -> str:
    """The memory layout a report's implementation used (v1 for reports that do not say)."""
    follows = (header.get("implementation") or {}).get("follows") or {}
    return str(follows.get("layout") or "v1")


def load(paths: list[Path]) -> list[Side]:
    if len(paths) < 2:
        raise CompareError("give at least two reports")
    sides: list[Side] = []
    seen: Counter[str] = Counter()
    for path in paths:
        try:
            header, records, _ = rep.load(path)
        except rep.ReportError as exc:
            raise CompareError(str(exc)) from exc
        impl = header["implementation"]
        label = f"{impl.get('name', impl.get('spec'))} {impl.get('version', '')}".strip()
        if layout_of(header) != "v1":
            label += f" (layout {layout_of(header)})"
        seen[label] += 1
        if seen[label] > 1:
            label = f"{label} #{seen[label]}"
        sides.append(Side(label, str(path), header, {r["id"]: r for r in records}))
    return sides


def _expectation(record: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if record is None else record.get("expectation")


def pair(base: Side, other: Side) -> dict[str, Any]:
    """What changed from `base` to `other`."""
    out: dict[str, list[dict[str, Any]]] = {
        "regressions": [], "fixes": [], "added": [], "removed": [],
        "expectation_changes": [], "other_changes": []}
    for check_id in sorted(set(base.records) | set(other.records)):
        a, b = base.records.get(check_id), other.records.get(check_id)
        if a is None:
            assert b is not None
            out["added"].append({"id": check_id, "status": b["status"]})
            continue
        if b is None:
            out["removed"].append({"id": check_id, "status": a["status"]})
            continue
        entry = {"id": check_id, "area": b["area"], "level": b["level"], "from": a["status"],
                 "to": b["status"], "sentence": b.get("sentence", "")}
        if a["status"] in GOOD and b["status"] in BAD:
            out["regressions"].append(entry)
        elif a["status"] in BAD and b["status"] in GOOD:
            out["fixes"].append(entry)
        elif a["status"] != b["status"]:
            out["other_changes"].append(entry)
        if _expectation(a) != _expectation(b):
            out["expectation_changes"].append(
                {"id": check_id, "from": _expectation(a), "to": _expectation(b)})
    return {"base": base.label, "other": other.label, **out}


def figures(side: Side) -> dict[str, Any]:
    records = list(side.records.values())
    passed, ran = rep.agreement(records)
    return {"label": side.label, "path": side.path, "counts": rep.counts(records),
            "agreement": {"passed": passed, "run": ran},
            "conformance": {area: {level: {"passed": p, "run": r}
                                   for level, (p, r) in levels.items()}
                            for area, levels in rep.conformance(records).items()}}


def matrix(sides: list[Side]) -> dict[str, list[dict[str, Any]]]:
    """Per area, each check with its status in every report (null where it is absent)."""
    areas: dict[str, list[dict[str, Any]]] = {}
    every = sorted({cid for side in sides for cid in side.records})
    for check_id in every:
        found = next(s.records[check_id] for s in sides if check_id in s.records)
        areas.setdefault(found["area"], []).append(
            {"id": check_id, "level": found["level"],
             "statuses": [s.records[check_id]["status"] if check_id in s.records else None
                          for s in sides]})
    return dict(sorted(areas.items()))


def compare(sides: list[Side]) -> dict[str, Any]:
    """The JSON form (see schemas/compare.schema.json)."""
    pairs = [pair(sides[0], other) for other in sides[1:]]
    return {"reports": [figures(s) for s in sides], "pairs": pairs, "matrix": matrix(sides),
            "regressions": sum(len(p["regressions"]) for p in pairs)}


def markdown(data: dict[str, Any]) -> str:
    labels = [r["label"] for r in data["reports"]]
    lines = [f"# Compare: {' vs '.join(labels)}", "", "| report | passed / run | " +
             " | ".join(rep.STATUSES) + " |", "|---|---:|" + "---:|" * len(rep.STATUSES)]
    for r in data["reports"]:
        lines.append(f"| {r['label']} | {r['agreement']['passed']}/{r['agreement']['run']} | "
                     + " | ".join(str(r["counts"][s]) for s in rep.STATUSES) + " |")
    for p in data["pairs"]:
        lines += ["", f"## {p['base']} → {p['other']}", ""]
        for key, title in (("regressions", "Regressions"), ("fixes", "Fixes"),
                           ("other_changes", "Other status changes")):
            lines.append(f"**{title}: {len(p[key])}**")
            lines += [f"- `{e['id']}` {e['from']} → {e['to']}"
                      + (f": {e['sentence']}" if e["sentence"] else "") for e in p[key]]
            lines.append("")
        for key, title in (("added", "Added checks"), ("removed", "Removed checks")):
            lines.append(f"**{title}: {len(p[key])}**")
            lines += [f"- `{e['id']}` ({e['status']})" for e in p[key]]
            lines.append("")
        lines.append(f"**Expectation changes: {len(p['expectation_changes'])}**")
        lines += [f"- `{e['id']}`: {_exp(e['from'])} → {_exp(e['to'])}"
                  for e in p["expectation_changes"]]
    if len(labels) > 2:
        lines += ["", "## Matrix", "", "| check | " + " | ".join(labels) + " |",
                  "|---|" + "---|" * len(labels)]
        for area, rows in data["matrix"].items():
            lines.append(f"| **{area}** |" + " |" * len(labels))
            lines += [f"| `{row['id']}` | " + " | ".join(s or "—" for s in row["statuses"])
                      + " |" for row in rows]
    return "\n".join(lines).rstrip() + "\n"


def _exp(entry: dict[str, Any] | None) -> str:
    return "none" if entry is None else f"{entry['status']} ({entry['key']})"


def html(data: dict[str, Any]) -> str:
    from memconform.htmlreport import environment

    template = environment().get_template("compare.html.j2")
    return template.render(data=data, labels=[r["label"] for r in data["reports"]],
                           statuses=rep.STATUSES)

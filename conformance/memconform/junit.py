"""`junit.xml` from the check records: one testcase per check id (classname = area), so CI
test history is keyed by what the suite checks, not by where it is installed."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

_SKIPPED = ("xfail", "unsupported", "not-implemented", "skip")


def write(path: Path, suite: str, records: list[dict[str, Any]], duration_s: float, *,
          complete: bool = True) -> None:
    tally = Counter(r["status"] for r in records)
    root = ET.Element("testsuites")
    suite_el = ET.SubElement(root, "testsuite", {
        "name": suite, "tests": str(len(records)),
        "failures": str(tally["fail"] + tally["xpass"]), "errors": str(tally["error"]),
        "skipped": str(sum(tally[s] for s in _SKIPPED)), "time": f"{duration_s:.3f}"})
    suite_props = ET.SubElement(suite_el, "properties")
    ET.SubElement(suite_props, "property", {"name": "complete", "value": str(complete).lower()})
    for record in records:
        case = ET.SubElement(suite_el, "testcase", {
            "classname": record["area"], "name": record["id"],
            "time": f"{record.get('duration_s', 0.0):.3f}"})
        props = ET.SubElement(case, "properties")
        for name in ("status", "level"):
            ET.SubElement(props, "property", {"name": name, "value": str(record[name])})
        ET.SubElement(props, "property", {"name": "rules", "value": ",".join(record["rules"])})
        status, message = record["status"], record.get("message") or ""
        headline = record.get("sentence") or message.split("\n", 1)[0]
        if status in ("fail", "xpass"):
            ET.SubElement(case, "failure", {"message": headline, "type": status}).text = message
        elif status == "error":
            ET.SubElement(case, "error", {"message": headline, "type": "error"}).text = message
        elif status in _SKIPPED:
            ET.SubElement(case, "skipped", {"message": f"{status}: {headline}".rstrip(": ")})
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tmp = path.with_suffix(".xml.tmp")
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)

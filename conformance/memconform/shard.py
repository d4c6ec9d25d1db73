"""Runs split across CI jobs: `run --shard K/N` and `merge`.

Shards are cut from the selected check ids, the same in every job: with the durations of an
earlier report, the longest checks are placed first, each into the shard with the least time
so far (ties: the lower shard, then the check id); without them every check counts one second.
A check the earlier report lacks counts as the median of those it has.
"""

from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform import report as rep

# configuration that must agree between the shards of one run
SAME_RUN = ("impl", "expectations", "profile", "areas", "check_ids", "match", "keyword", "smoke",
            "seed")


class ShardError(ValueError):
    """A shard spec, durations file or set of shard reports that cannot be used."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    parts = text.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ShardError(f"--shard {text!r}: expected K/N, e.g. 2/4")
    index, count = int(parts[0]), int(parts[1])
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text!r}: K must be between 1 and N")
    return Shard(index, count)


def durations(path: Path) -> dict[str, float]:
    """Each check's duration in an earlier report (complete or not)."""
    try:
        lines = rep.read_lines(path)
    except rep.ReportError as exc:
        raise ShardError(f"--shard-durations: {exc}") from exc
    return {line["id"]: float(line.get("duration_s", 0.0)) for line in lines
            if line.get("type") == "check"}


def assign(ids: list[str], count: int, known: dict[str, float]) -> dict[str, int]:
    """Shard number (1-based) of every id: longest first, into the least loaded shard."""
    measured = [known[i] for i in ids if i in known]
    default = statistics.median(measured) if measured else 1.0
    cost = {i: known.get(i, default) for i in ids}
    loads = [0.0] * count
    placed: dict[str, int] = {}
    for check_id in sorted(ids, key=lambda i: (-cost[i], i)):
        target = min(range(count), key=lambda k: (loads[k], k))
        loads[target] += cost[check_id]
        placed[check_id] = target + 1
    return placed


def merge(paths: list[Path], out: Path) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                 dict[str, Any]]:
    """One run's report from the reports of its N shards; written to `out`."""
    if not paths:
        raise ShardError("give the report of every shard")
    parts = []
    for path in paths:
        try:
            header, records, footer = rep.load(path)
        except rep.ReportError as exc:
            raise ShardError(str(exc)) from exc
        shard = header["config"].get("shard")
        if not shard:
            raise ShardError(f"{path}: not the report of a --shard run")
        parts.append((path, parse(shard), header, records, footer))
    counts = {s.count for _, s, *_ in parts}
    if len(counts) != 1:
        raise ShardError(f"the reports come from runs cut into {sorted(counts)} shards")
    count = counts.pop()
    given: dict[int, Path] = {}
    for path, shard, *_ in parts:
        if shard.index in given:
            raise ShardError(f"shard {shard} is given twice ({given[shard.index]}, {path})")
        given[shard.index] = path
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in given]
    if missing:
        raise ShardError(f"missing shard(s) {', '.join(missing)}")
    first = parts[0][2]
    for path, _, header, _, _ in parts[1:]:
        for key in SAME_RUN:
            if header["config"].get(key) != first["config"].get(key):
                raise ShardError(f"{path}: not a shard of the same run ({key} differs)")
        if header["suite_version"] != first["suite_version"]:
            raise ShardError(f"{path}: written by memconform {header['suite_version']}, "
                             f"the others by {first['suite_version']}")
    owner: dict[str, str] = {}
    for _, shard, _, records, _ in parts:
        for record in records:
            if record["id"] in owner:
                raise ShardError(f"check {record['id']} ran in shards {owner[record['id']]} "
                                 f"and {shard}: the shards overlap")
            owner[record["id"]] = str(shard)
    records = sorted((r for *_, rs, _ in parts for r in rs), key=lambda r: r["id"])
    stale = sorted(set.intersection(*(set(f["stale_expectations"]) for *_, f in parts)))
    config = {k: v for k, v in first["config"].items() if k not in ("shard",
                                                                      "shard_durations")}
    header = {**first, "config": config,
              "started_at": min(h["started_at"] for _, _, h, _, _ in parts)}
    footer = {"type": "footer", "counts": rep.counts(records), "by_area": rep.by_area(records),
              "stale_expectations": stale,
              "duration_s": max(f["duration_s"] for *_, f in parts),
              "selected": sum(f["selected"] or 0 for *_, f in parts), "ran": len(records),
              "complete": True,
              "shards": [{"shard": str(s), "duration_s": f["duration_s"], "ran": f["ran"]}
                         for _, s, _, _, f in sorted(parts, key=lambda p: p[1].index)]}
    _write(out, header, records, footer, [p for p, *_ in parts])
    return header, records, footer


def _write(out: Path, header: dict[str, Any], records: list[dict[str, Any]],
           footer: dict[str, Any], sources: list[Path]) -> None:
    import json

    out.mkdir(parents=True, exist_ok=True)
    for name in rep.REPORT_FILES:
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "bundles", ignore_errors=True)
    for source in sources:
        bundles = source.parent / "bundles"
        if bundles.is_dir():
            shutil.copytree(bundles, out / "bundles", dirs_exist_ok=True)
    lines = [header, *records, footer]
    (out / "report.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines),
                                      encoding="utf-8")
    rep.write_derived(out, header, records, footer)

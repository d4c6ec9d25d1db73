"""`run --shard K/N` and `merge`: a run fanned out over CI jobs and put back together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import read_report, run_cli
from memconform import schemas
from memconform.shard import ShardError, assign, parse

AREAS = ("--area", "config", "--area", "store", "--area", "startup", "--area", "tokens")


def test_shards_are_balanced_by_duration_and_deterministic() -> None:
    ids = [f"c{i:02d}" for i in range(10)]
    known = {"c00": 9.0, "c01": 5.0, "c02": 4.0}
    placed = assign(ids, 3, known)
    assert placed == assign(list(reversed(ids)), 3, known), "the order given must not matter"
    loads = [sum(known.get(i, 5.0) for i in ids if placed[i] == k) for k in (1, 2, 3)]
    assert max(loads) - min(loads) <= 5.0, loads  # unknown checks count the median, 5 s
    assert placed["c00"] != placed["c01"], "the two longest checks share a shard"
    assert set(assign(ids, 4, {}).values()) == {1, 2, 3, 4}


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_spec_is_refused(text: str) -> None:
    with pytest.raises(ShardError):
        parse(text)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    base = tmp_path_factory.mktemp("shards")
    whole = run_cli("run", *AREAS, "--report-dir", str(base / "whole"), cwd=base)
    assert whole.returncode == 0, whole.stderr[-2000:]
    parts = []
    for k in range(1, 5):
        out = base / f"shard{k}"
        done = run_cli("run", *AREAS, "--shard", f"{k}/4", "--shard-durations",
                       str(base / "whole" / "report.jsonl"), "--report-dir", str(out), cwd=base)
        assert done.returncode == 0, done.stderr[-2000:]
        parts.append(out / "report.jsonl")
    return base, parts


def statuses(out: Path) -> dict[str, str]:
    return {r["id"]: r["status"] for r in read_report(out) if r.get("type") == "check"}


def test_four_shards_merge_into_the_unsharded_run(sharded: tuple[Path, list[Path]]) -> None:
    base, parts = sharded
    sizes = [len(statuses(p.parent)) for p in parts]
    assert all(sizes) and sum(sizes) == len(statuses(base / "whole"))
    result = run_cli("merge", *map(str, parts), "--out", str(base / "merged"), cwd=base)
    assert result.returncode == 0, result.stderr[-2000:]
    assert statuses(base / "merged") == statuses(base / "whole")
    lines = read_report(base / "merged")
    footer = lines[-1]
    assert footer["complete"] and footer["selected"] == footer["ran"] == sum(sizes)
    assert [s["shard"] for s in footer["shards"]] == ["1/4", "2/4", "3/4", "4/4"]
    assert "shard" not in lines[0]["config"]
    assert all(schemas.problems("report", line) == [] for line in lines)
    for name in ("junit.xml", "summary.md", "report.html"):
        assert (base / "merged" / name).is_file(), name


def test_merge_refuses_missing_repeated_and_foreign_shards(sharded: tuple[Path, list[Path]],
                                                           tmp_path: Path) -> None:
    base, parts = sharded
    cases = {
        "missing shard(s) 4/4": parts[:3],
        "shard 2/4 is given twice": [parts[0], parts[1], parts[1], parts[2]],
        "not the report of a --shard run": [*parts, base / "whole" / "report.jsonl"],
    }
    for problem, given in cases.items():
        result = run_cli("merge", *map(str, given), "--out", str(tmp_path / "m"), cwd=tmp_path)
        assert result.returncode == 2 and problem in " ".join(result.stderr.split()), problem
    other = tmp_path / "other.jsonl"
    lines = (parts[1]).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["config"]["impl"] = "exec:somebody-else"
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    result = run_cli("merge", str(parts[0]), str(other), str(parts[2]), str(parts[3]),
                     "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert result.returncode == 2 and "not a shard of the same run (impl differs)" in \
        " ".join(result.stderr.split())
    overlapping = tmp_path / "overlap.jsonl"
    first = parts[0].read_text(encoding="utf-8").splitlines()
    second = json.loads(parts[1].read_text(encoding="utf-8").splitlines()[0])
    overlapping.write_text("\n".join([json.dumps(second), *first[1:]]) + "\n", encoding="utf-8")
    result = run_cli("merge", str(parts[0]), str(overlapping), str(parts[2]), str(parts[3]),
                     "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert result.returncode == 2 and "the shards overlap" in result.stderr

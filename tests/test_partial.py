"""Partial and do-nothing implementations, run as a porter would: stdio adapters written in
another language (Node.js) or wrapping part of the reference, through `memconform run`."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import read_report, run_cli
from memconform import resources

ADAPTERS = Path(__file__).parent / "adapters"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
NOTHING = f"exec:{NODE} {ADAPTERS / 'nothing.mjs'}"
CITATIONS = f"exec:{NODE} {ADAPTERS / 'citations.mjs'}"
READ_ONLY = f"exec:{sys.executable} {ADAPTERS / 'read_only.py'}"
# checks of every stage whose implementation "did not do the thing" against a do-nothing
# adapter: a stage-1 request, a row, raw_memories.md, a claim token, a tool output
NOTHING_IDS = ("startup", "store", "tokens.approx[one-byte]", "p1.in.request.shape",
               "p1.out.row", "p1.snap.extraction", "p2.fs.raw-memories", "p2.git.first-baseline",
               "p2.job.success", "p2.job.failure", "p2.agent.writes-land",
               "read.tool.page-defaults", "read.tool.list[root-is-shallow]",
               "read.usage.feeds-selection", "config.defaults")


def checks(out: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in read_report(out) if r.get("type") == "check"}


def stable(out: Path) -> list[dict[str, Any]]:
    """The check records without their durations."""
    return [{k: v for k, v in r.items() if k != "duration_s"} for r in checks(out).values()]


@pytest.fixture(scope="module")
def nothing_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    if NODE is None:
        pytest.skip("Node.js is not installed")
    base = tmp_path_factory.mktemp("nothing")
    outputs = []
    for name in ("first", "second"):
        args = [arg for check_id in NOTHING_IDS for arg in ("--id", check_id)]
        result = run_cli("run", "--impl", NOTHING, *args, "--report-dir", str(base / name),
                         cwd=base)
        assert result.returncode == 1, result.stderr[-3000:]
        outputs.append(result.stdout + result.stderr)
    return base / "first", base / "second", outputs[0]


@needs_node
def test_producing_nothing_is_fail_never_error(nothing_runs: tuple[Path, Path, str]) -> None:
    found = checks(nothing_runs[0])
    assert found, "no records"
    errors = {k: r["sentence"] for k, r in found.items() if r["status"] == "error"}
    assert errors == {}, "a missing request, row, file or token must be the check's fail"
    for check_id, record in found.items():
        if record["status"] == "fail":
            assert record["sentence"] and not record["sentence"].endswith("does not hold"), (
                f"{check_id}: {record['sentence']!r} is not a sentence")
            assert shlex.split(record["repro"]) == ["memconform", "run", "--impl", NOTHING,
                                                    "--id", check_id]
    assert found["store.separate-file"]["status"] == "fail"
    assert found["p2.job.success"]["status"] == "fail"


@needs_node
def test_every_report_gives_the_same_counts(nothing_runs: tuple[Path, Path, str]) -> None:
    out, _, console = nothing_runs
    footer = read_report(out)[-1]
    counts = {k: v for k, v in footer["counts"].items() if v}
    recounted: dict[str, int] = {}
    for record in checks(out).values():
        recounted[record["status"]] = recounted.get(record["status"], 0) + 1
    assert recounted == counts
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("failures", -1)) == counts.get("fail", 0) + counts.get("xpass", 0)
    assert int(suite.get("errors", -1)) == counts.get("error", 0)
    assert {c.get("name") for c in suite.iter("testcase")} == set(checks(out))
    assert all(not (c.get("classname") or "").startswith((".", "/")) and "site-packages"
               not in (c.get("classname") or "") for c in suite.iter("testcase"))
    pytest_line = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    for status, number in counts.items():
        assert f"{number} {status}" in console, f"console misses {number} {status}"
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"| **all** | {counts.get('pass', 0)} | {counts.get('fail', 0)} |" in summary, (
        pytest_line)


@needs_node
def test_two_runs_of_one_failing_implementation_are_identical(
        nothing_runs: tuple[Path, Path, str], tmp_path: Path) -> None:
    first, second, _ = nothing_runs
    assert stable(first) == stable(second)
    written = []
    for out in (first, second):
        target = tmp_path / f"{out.name}.toml"
        result = run_cli("update-expectations", str(out / "report.jsonl"), str(target),
                         cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        written.append(target.read_text(encoding="utf-8"))
    assert written[0] == written[1]
    assert "/tmp" not in written[0] and " at 0x" not in written[0]


@needs_node
def test_a_failure_keeps_its_bundle(nothing_runs: tuple[Path, Path, str]) -> None:
    out = nothing_runs[0]
    record = checks(out)["p2.fs.raw-memories"]
    bundle = out / record["bundle"]
    assert {p.name for p in bundle.iterdir()} >= {"check.json", "transcript.jsonl",
                                                   "model.json", "home-before.txt",
                                                   "home-after.txt"}
    data = json.loads((bundle / "check.json").read_text(encoding="utf-8"))
    assert data["record"]["id"] == "p2.fs.raw-memories"
    assert set(data["rules"]) == set(record["rules"]) and all(
        rule["text"] for rule in data["rules"].values())
    exchanges = [json.loads(line) for line in
                 (bundle / "transcript.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(e.get("request", {}).get("op") == "startup" for e in exchanges)
    assert any("response" in e for e in exchanges)
    assert "state_5.sqlite" in (bundle / "home-before.txt").read_text(encoding="utf-8")


def test_a_read_path_only_library_is_conformant_by_declaring_its_scope(tmp_path: Path
                                                                       ) -> None:
    result = run_cli("run", "-q", "-n", "2", "--impl", READ_ONLY, "--report-dir",
                     str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    found = checks(tmp_path / "r")
    statuses = {r["status"] for r in found.values()}
    assert statuses <= {"pass", "not-implemented", "unsupported"} and "pass" in statuses
    needs = {c["check"]: set(c["needs"]) for c in json.loads(
        resources.doc("MANIFEST.json").read_text(encoding="utf-8"))["checks"]}
    declared = {"clock.inject", "citations.parse", "turn.message", "turn.instructions",
                "memory.tools", "turn.event"}
    unsupported = {r["id"].split("[", 1)[0] for r in found.values()
                   if r["status"] == "unsupported"}
    assert all(needs[c] - declared for c in unsupported), \
        "a check the adapter declared every capability for was reported unsupported"
    read = [r for r in found.values() if r["area"] == "read"]
    passed = sum(r["status"] == "pass" for r in read)
    assert passed > 200
    assert all(r["status"] == "not-implemented" for r in found.values()
               if r["area"] not in ("read", "protocol"))
    assert f"read: SHOULD {passed}/{passed}" in result.stderr
    assert "not implemented: config, phase1, phase2, startup, store, tokens" in result.stderr


@needs_node
def test_a_citations_only_port_runs_only_its_scope(tmp_path: Path) -> None:
    result = run_cli("run", "-q", "--impl", CITATIONS, "--report-dir", str(tmp_path / "r"),
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    found = checks(tmp_path / "r")
    ran = {k for k, r in found.items() if r["status"] == "pass"}
    assert ran and all(k.startswith(("read.cite.", "protocol.start")) for k in ran)
    assert {r["status"] for k, r in found.items() if k.startswith("read.cite.turn")} == {
        "unsupported"}, "a SHOULD check needing an undeclared capability"
    header = read_report(tmp_path / "r")[0]
    assert header["implementation"]["scope"] == ["read.cite"]

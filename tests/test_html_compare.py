"""report.html in a real headless browser, `memconform compare`, and the report schemas."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import read_report, run_cli
from memconform import schemas

CHROMIUM = os.environ.get("MEMCONFORM_CHROMIUM") or shutil.which("chromium") \
    or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
MUTANT = "python:memconform.mutants.m57_branch_line_always:factory"
IDS = ("p2.fs.summary-file", "p2.fs.stem", "p2.fs.tree")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same checks on the reference and on a mutant that breaks summary files."""
    base = tmp_path_factory.mktemp("html")
    selection = [arg for check_id in IDS for arg in ("--id", check_id)]
    ref = run_cli("run", *selection, "--report-dir", str(base / "ref"), cwd=base)
    assert ref.returncode == 0, ref.stderr[-2000:]
    mutant = run_cli("run", "--impl", MUTANT, *selection, "--report-dir", str(base / "mutant"),
                     cwd=base)
    assert mutant.returncode == 1, mutant.stderr[-2000:]
    return base / "ref", base / "mutant"


def failing(out: Path) -> set[str]:
    return {r["id"] for r in read_report(out)
            if r.get("type") == "check" and r["status"] in ("fail", "error")}


def test_every_report_line_and_summary_matches_its_schema(runs: tuple[Path, Path]) -> None:
    for out in runs:
        for line in read_report(out):
            assert schemas.problems("report", line) == [], line.get("id", line["type"])
        result = run_cli("summary", str(out / "report.jsonl"), "--format", "json", cwd=out)
        assert schemas.problems("summary", json.loads(result.stdout)) == []
    broken = {**read_report(runs[1])[1], "status": "passed"}
    assert schemas.problems("report", broken), "a record with an unknown status conforms"


def dom(page: Path, fragment: str, out: Path) -> str:
    """The page's DOM after its script ran, opened at `fragment`."""
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={out / 'chromium-profile'}",
                           "--virtual-time-budget=5000", "--dump-dom",
                           f"{page.as_uri()}{fragment}"],
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def visible(html: str) -> list[str]:
    return [i for c, i in re.findall(r'<tr class="check([^"]*)"[^>]*data-id="([^"]+)"', html)
            if "hidden" not in c]


@needs_chromium
def test_the_page_in_a_browser(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = runs[1]
    page = out / "report.html"
    records = [r for r in read_report(out) if r.get("type") == "check"]
    footer = read_report(out)[-1]
    html = dom(page, "", tmp_path)
    assert len(visible(html)) == len(records)
    for status, number in footer["counts"].items():
        cell = re.search(rf'<tr data-area="phase2">.*?<td class="n" data-status="{status}">'
                         r"(\d+)</td>", html, re.S)
        assert cell is not None and int(cell.group(1)) == number, status
    # a filter hides the passing checks
    assert sorted(visible(dom(page, "#status=!pass", tmp_path))) == sorted(failing(out))
    # a deep link opens one failure
    target = sorted(failing(out))[0]
    opened = dom(page, f"#check={target}", tmp_path)
    row = re.search(rf'<tr class="check([^"]*)"[^>]*data-id="{re.escape(target)}"', opened)
    assert row is not None and "open" in row.group(1)
    assert "repro: <code>memconform run --impl" in opened
    shot = out / "report-screenshot.png"
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'chromium-shot'}",
                           f"--screenshot={shot}", "--window-size=1280,1600", page.as_uri()],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_incomplete_report_gets_a_page_that_says_so(runs: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    lines = (runs[0] / "report.jsonl").read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "report.jsonl"
    cut.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    result = run_cli("report", str(cut), "--html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Incomplete run:" in page and "no footer after 2 check records" in page


def test_compare_finds_exactly_the_mutants_failures_as_regressions(
        runs: tuple[Path, Path], tmp_path: Path) -> None:
    ref, mutant = (str(p / "report.jsonl") for p in runs)
    result = run_cli("compare", ref, mutant, "--format", "json", "--fail-on", "regression",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert schemas.problems("compare", data) == []
    [pair] = data["pairs"]
    assert {e["id"] for e in pair["regressions"]} == failing(runs[1]) != set()
    assert pair["fixes"] == [] and pair["added"] == pair["removed"] == []
    back = json.loads(run_cli("compare", mutant, ref, "--format", "json", cwd=tmp_path).stdout)
    assert {e["id"] for e in back["pairs"][0]["fixes"]} == failing(runs[1])
    same = run_cli("compare", ref, ref, "--fail-on", "regression", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    for fmt, marker in (("md", "**Regressions: "), ("html", 'class="regressions"'),
                        ("table", "regressions")):
        shown = run_cli("compare", ref, mutant, ref, "--format", fmt, cwd=tmp_path)
        assert shown.returncode == 0 and marker in shown.stdout, fmt
    three = json.loads(run_cli("compare", ref, mutant, ref, "--format", "json",
                               cwd=tmp_path).stdout)
    row = next(r for rows in three["matrix"].values() for r in rows
               if r["id"] in failing(runs[1]))
    assert row["statuses"] == ["pass", "fail", "pass"]


def test_compare_refuses_a_single_or_incomplete_report(runs: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    one = run_cli("compare", str(runs[0] / "report.jsonl"), cwd=tmp_path)
    assert one.returncode == 2 and "at least two reports" in one.stderr
    cut = tmp_path / "cut.jsonl"
    cut.write_text((runs[0] / "report.jsonl").read_text().splitlines()[0] + "\n")
    bad = run_cli("compare", str(runs[0] / "report.jsonl"), str(cut), cwd=tmp_path)
    assert bad.returncode == 2 and "incomplete" in bad.stderr

"""The benchmark runner's parts on small inputs: probes in their own processes, the contention
run's double-commit count, and the Markdown table (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memconform.bench import runner
from memconform.bench.codex import python_floor
from memconform.bench.runner import Result, contention, markdown, probe
from memconform.cli import bytecode_env


def test_probes_measure_in_their_own_process(tmp_path: Path) -> None:
    found = probe("scan", work=str(tmp_path), threads=300)
    assert found["seconds"] > 0 and 0 < found["candidates"] <= 300
    chosen = probe("select", work=str(tmp_path), outputs=300, limit=50)
    assert chosen["selected"] == 50 and chosen["materialize_seconds"] > 0


def test_contention_finishes_every_thread_once(tmp_path: Path) -> None:
    [result] = contention(tmp_path, [3], pool=60, runs=1)
    assert result.extra["double_commits"] == 0 and result.extra["lost"] == 0
    assert result.samples[0] > 0 and result.extra["bare_cycles_per_s"] > 0
    assert result.target_text == "within 2x of bare, no double commit"


def test_contention_counts_double_commits_and_lost_jobs(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = (f"00000000-0000-7000-8000-{n:012d}" for n in range(2))
    answers = iter([(1.0, [{"finished": [first, second]}, {"finished": [first]}]),
                    (1.0, [{}, {}])])
    monkeypatch.setattr(runner, "_race", lambda commands: next(answers))
    [result] = contention(tmp_path, [2], pool=3, runs=1)
    # one job finished twice; one never finished; two finished by workers but not in the file
    assert result.extra["double_commits"] == 1 and result.extra["lost"] == 3
    assert result.met is False


def test_suite_speed_counts_what_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        report = Path(command[command.index("--report-dir") + 1])
        report.mkdir(parents=True)
        lines = [{"type": "header"}, {"type": "check", "status": "pass"},
                 {"type": "check", "status": "fail"}, {"type": "footer"}]
        (report / "report.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
        return subprocess.CompletedProcess(command, 1, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    [result] = runner.suite_speed(tmp_path, runs=2, serial=False)
    assert result.extra["checks"] == 2 and result.extra["passed"] == 1
    assert len(result.samples) == 2 and result.target == 15.0


def test_suite_speed_without_a_report_is_an_error(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", lambda command, **_: subprocess.CompletedProcess(
        command, 2, "", "adapter crashed"))
    with pytest.raises(RuntimeError, match="wrote no report: adapter crashed"):
        runner.suite_speed(tmp_path, runs=1, serial=False)


def test_markdown_reports_targets_and_spread() -> None:
    rows = [Result("fast thing", "s", [0.2, 0.1, 0.3], target=0.5),
            Result("slow thing", "s", [2.0, 3.0, 4.0], target=1.0),
            Result("rate", "claims/s", [100.0], {"double_commits": 0}),
            Result("race", "claims/s", [50.0], goal=("within 2x of bare", False))]
    text = markdown({"date": "2026-12-03", "cores": 2, "python": "3.11", "sqlite": "3.40",
                     "platform": "linux"}, rows, ["a note"])
    assert "| fast thing | 200.0 ms | 100.0 ms to 300.0 ms | 3 | ≤ 0.5 s: met |" in text
    assert "≤ 1 s: **missed**" in text
    assert "| rate | 100 claims/s | 100 claims/s to 100 claims/s | 1 |  |" in text
    assert "double_commits 0" in text and "| within 2x of bare: **missed** |" in text
    assert text.startswith("# memconform benchmarks\n\n2026-12-03 · 2 cores")


def test_python_floor_imports_standard_modules_of_memref_cli_and_nothing_of_memref() -> None:
    command = python_floor(bytecode_env())
    names = command[-1].removeprefix("import ").split(", ")
    assert {"sqlite3", "http.client", "json", "subprocess"} <= set(names)
    assert not [n for n in names if n.startswith("memref")]
    subprocess.run(command, check=True, timeout=120)

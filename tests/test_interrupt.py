"""A report never claims more than happened: runs interrupted at random points, bad report
directories and expectation files, and the startup budget."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from memconform import fixtures
from memconform.clock import HarnessClock
from memconform.home import CodexHome
from memconform.report import ReportError, load

RUNS = 20
MODES = ("cli-sigint", "pytest-sigint", "cli-sigterm", "direct-pytest-sigint")
STALE = "STALE FROM AN EARLIER RUN"
# about 20 s of checks on the reference: every delay below falls inside the run
AREAS = ("--area", "phase1", "--area", "phase2")


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _interrupted_run(out: Path, mode: str, delay_s: float,
                     when_pytest_starts: bool = False) -> tuple[int, str]:
    """Start a run over a report directory holding an earlier run's files and signal it after
    `delay_s`, or as soon as the CLI has started its pytest process."""
    out.mkdir(parents=True)
    for name in ("junit.xml", "summary.md"):
        (out / name).write_text(STALE, encoding="utf-8")
    (out / "report.jsonl").write_text(json.dumps({"type": "header", "stale": STALE}) + "\n")
    if mode == "direct-pytest-sigint":
        cmd = [sys.executable, "-m", "pytest", "--pyargs", "memconform.checks", "-q",
               "-p", "no:cacheprovider", *AREAS, "--report-dir", str(out)]
    else:
        cmd = [sys.executable, "-m", "memconform", "run", "-q", *AREAS, "--report-dir", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay_s)
    deadline = time.monotonic() + 30
    while when_pytest_starts and not _children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.005)
    if proc.poll() is not None:
        output, _ = proc.communicate()
        pytest.fail(f"the run ended before the {mode} signal at {delay_s:.1f} s (exit "
                    f"{proc.returncode}); it must last longer than the longest delay:\n"
                    f"{output[-2000:]}")
    target, sig = proc.pid, signal.SIGINT
    if mode == "pytest-sigint":
        children = _children(proc.pid)
        target = children[0] if children else proc.pid
    elif mode == "cli-sigterm":
        sig = signal.SIGTERM
    os.kill(target, sig)
    try:
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, output


def test_interrupted_runs_never_claim_to_be_complete(tmp_path: Path) -> None:
    rng = random.Random(20261203)
    outcomes: list[tuple[str, float, int, int, object]] = []
    for index in range(RUNS):
        mode = MODES[index % len(MODES)]
        delay = rng.uniform(2.0, 8.0)
        out = tmp_path / f"run{index:02d}"
        code, output = _interrupted_run(out, mode, delay)
        want = pytest.ExitCode.INTERRUPTED if mode == "direct-pytest-sigint" else 3
        assert code == want, f"{mode} after {delay:.1f} s exited {code}:\n{output[-2000:]}"
        for name in ("junit.xml", "summary.md", "report.jsonl"):
            path = out / name
            assert not path.exists() or STALE not in path.read_text(encoding="utf-8"), (
                f"{mode}: {name} is left over from an earlier run")
        if not (out / "report.jsonl").exists():
            # stopped while pytest was starting, before the plugin started the report
            assert mode == "direct-pytest-sigint" or "INCOMPLETE RUN" in output, output[-2000:]
            outcomes.append((mode, round(delay, 1), code, 0, "no report"))
            continue
        with pytest.raises(ReportError, match="incomplete"):
            load(out / "report.jsonl")
        _, records, footer = load(out / "report.jsonl", allow_incomplete=True)
        assert footer.get("complete") is not True
        if footer:
            assert footer["ran"] == len(records)
            # selected is null when the run stopped before its collection finished; ran may
            # equal selected when the signal came during the last check
            assert footer["selected"] is None or footer["ran"] <= footer["selected"]
            assert footer["reason"]
        if (out / "summary.md").exists():
            assert "Incomplete run" in (out / "summary.md").read_text(encoding="utf-8")
        outcomes.append((mode, round(delay, 1), code, len(records), footer.get("reason")))
    print("\n".join(map(str, outcomes)))


def test_a_run_stopped_while_pytest_starts_leaves_no_earlier_report(tmp_path: Path) -> None:
    code, output = _interrupted_run(tmp_path / "out", "cli-sigterm", 0, when_pytest_starts=True)
    assert code == 3, output[-2000:]
    assert "INCOMPLETE RUN" in output and "Traceback" not in output, output[-2000:]
    for name in ("junit.xml", "summary.md", "report.jsonl"):
        path = tmp_path / "out" / name
        assert not path.exists() or STALE not in path.read_text(encoding="utf-8"), (
            f"{name} is left over from an earlier run")


def test_summary_refuses_an_incomplete_report(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text(json.dumps({"type": "header", "implementation": {}}) + "\n"
                    + json.dumps({"type": "check", "id": "a", "status": "pass"}) + "\n"
                    + '{"type": "check", "id": "b", "sta')
    result = run_cli("summary", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "incomplete: no footer after 1 check records" in " ".join(result.stderr.split())


def test_an_unwritable_report_dir_is_refused_before_any_check(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    started = time.monotonic()
    result = run_cli("run", "--report-dir", str(blocker / "reports"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "cannot write reports there" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert time.monotonic() - started < 30, "it ran checks first"


def test_a_non_utf8_expectations_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('["store"]\nstatus = "fail"\nreason = "caf\u00e9"\n'.encode("latin-1"))
    result = run_cli("run", "--expectations", str(bad), "--report-dir", str(tmp_path / "r"),
                     cwd=tmp_path)
    assert result.returncode == 2
    assert "not UTF-8 text" in result.stderr and "Traceback" not in result.stderr


def test_the_startup_budget_comes_from_the_option(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home = CodexHome(tmp_path / "h", now_ms=0, model_base_url="http://127.0.0.1:9/v1")
    monkeypatch.setattr(fixtures, "startup_timeout_s", 300.0)
    args = fixtures.startup_args(home, HarnessClock(injected=True), seed=0)
    assert args["timeout_s"] == 300.0, "a 300 s budget must not be capped"
    assert fixtures.startup_args(home, HarnessClock(injected=True), seed=0,
                                 timeout_s=5)["timeout_s"] == 5


def test_an_interrupt_python_drops_still_stops_the_run(tmp_path: Path) -> None:
    """SIGINT during a garbage-collector callback: Python drops the KeyboardInterrupt (the
    CI failure of 2026-12-03, inside hypothesis's callback); the run still stops, says so and
    exits non-zero."""
    out = tmp_path / "r"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent / "plugins")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "memconform.checks", "-q",
         "-p", "no:cacheprovider", "-p", "sigint_in_gc", "--area", "startup",
         "--report-dir", str(out)], capture_output=True, text=True, timeout=120, env=env,
        stdin=subprocess.DEVNULL)
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout[-2000:]
    _, records, footer = load(out / "report.jsonl", allow_incomplete=True)
    assert footer["complete"] is False
    assert footer["reason"] == "interrupted (SIGINT)"
    assert footer["ran"] == len(records) < footer["selected"]

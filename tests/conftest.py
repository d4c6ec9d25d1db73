"""Shared helpers for the harness's own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]
PYCACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memconform" / \
    "pycache-tests"


def pytest_configure() -> None:
    """The tests start hundreds of memconform processes: they cache bytecode and pytest's
    rewritten check modules in one folder of their own (seconds per process where
    PYTHONDONTWRITEBYTECODE=1), never next to the sources. (Their temporary folders go to the
    memory file system through the memconform plugin, basetemp.py.)"""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(PYCACHE))


def run_cli(*args: str, cwd: Path, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m memconform ARGS` in a subprocess, bounded in time; `env` adds variables."""
    return subprocess.run([sys.executable, "-m", "memconform", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


def run_memref(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[object, str, str]:
    """`memref ARGS` in this process: its exit status, stdout and stderr."""
    from memref.cli import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def statuses(report_dir: Path) -> dict[str, str]:
    lines = (report_dir / "report.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    return {r["id"]: r["status"] for r in records if r.get("type") == "check"}


def read_report(report_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (report_dir / "report.jsonl").read_text(encoding="utf-8").splitlines()]

"""What a person sees while a run goes: a live display on a terminal, plain lines otherwise."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from memconform import resources

MUTANT = "python:memconform.mutants.m05_jobs_index_missing:factory"
SELECTION = ("--area", "store", "--area", "startup")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _selected() -> int:
    """How many check cases SELECTION runs, from the shipped MANIFEST."""
    manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
    return sum(c["area"] in SELECTION[1::2] for c in manifest["checks"])


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is not installed")
def test_a_terminal_gets_a_live_display_and_failures_as_they_happen(tmp_path: Path) -> None:
    command = " ".join([sys.executable, "-m", "memconform", "run", "--impl", MUTANT,
                        *SELECTION, "--report-dir", str(tmp_path / "r")])
    typescript = tmp_path / "typescript"
    subprocess.run(["script", "-q", "-e", "-c", command, str(typescript)], timeout=300,
                   capture_output=True, stdin=subprocess.DEVNULL, check=False)
    seen = ANSI.sub("", typescript.read_bytes().decode("utf-8", "replace"))
    total = _selected()
    assert re.search(rf"\d+/{total} checks, \d+ s elapsed, about \d+ s left", seen), \
        seen[-2000:]
    assert "running " in seen, "the check running now is not shown"
    failure = seen.index("FAIL store.schema[jobs]")
    assert "the jobs indexes differ from Codex's" in seen[failure:failure + 400]
    assert seen.index(f"{total}/{total} checks") > failure, \
        "the failure was not printed as it happened"


def test_without_a_terminal_each_check_is_one_plain_line(tmp_path: Path) -> None:
    result = run_cli("run", "--impl", MUTANT, *SELECTION, "--report-dir", str(tmp_path / "r"),
                     cwd=tmp_path)
    assert result.returncode == 1
    total = _selected()
    lines = [ln for ln in result.stdout.splitlines() if re.match(rf"\[\s*\d+/{total}\] ", ln)]
    assert len(lines) == total and "\x1b[" not in result.stdout
    fail = next(ln for ln in lines if "store.schema[jobs]" in ln)
    assert fail.split()[1:3] == ["fail", "store.schema[jobs]"]

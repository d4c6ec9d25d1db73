"""The `memconform` command line, run as a user would (subprocesses, real files)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import read_report, run_cli, statuses

STDIO_REF = f"exec:{sys.executable} -m memref.stdio"


@pytest.fixture(scope="module")
def ref_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    out = tmp_path_factory.mktemp("ref") / "report"
    result = run_cli("run", "-q", "--report-dir", str(out), cwd=out.parent)
    return result.returncode, out, result.stderr


def test_run_against_reference_is_conformant(ref_run: tuple[int, Path, str]) -> None:
    code, out, stderr = ref_run
    assert code == 0, stderr[-3000:]
    for name in ("report.jsonl", "junit.xml", "summary.md"):
        assert (out / name).is_file(), name
    lines = read_report(out)
    assert lines[-1]["complete"] is True
    manifest = json.loads(Path(__file__).parents[1].joinpath("conformance", "MANIFEST.json")
                          .read_text())
    local = [c for c in manifest["checks"] if c["profile"] == "local"]
    assert set(statuses(out)) == {c["id"] for c in local}
    # memref follows 0.144.6 here: rules of later releases do not apply to it
    assert statuses(out) == {c["id"]: "not-implemented" if c["codex_since"] else "pass"
                             for c in local}
    assert "agreement:" in stderr and "config" in stderr


def test_stdio_transport_on_xdist_workers_gives_the_same_statuses(
        ref_run: tuple[int, Path, str], tmp_path: Path) -> None:
    """The reference over its stdio adapter, on two xdist workers, against the serial run in
    process: both the transport and the distribution leave every status as it was."""
    result = run_cli("run", "-q", "--impl", STDIO_REF, "-n", "2", "--report-dir",
                     str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert statuses(tmp_path / "r") == statuses(ref_run[1])
    assert read_report(tmp_path / "r")[0]["config"]["workers"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["-k", "no_such_check_anywhere"], "no check id matches 'no_such_check_anywhere'"),
    (["--id", "p1.cand.selct"], "unknown check id 'p1.cand.selct'; did you mean p1.cand.select"),
])
def test_selecting_nothing_is_a_usage_error(tmp_path: Path, args: list[str], message: str
                                            ) -> None:
    result = run_cli("run", *args, "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())


def test_match_selects_by_check_id_glob(tmp_path: Path) -> None:
    result = run_cli("run", "-q", "-k", "read.cite.blocks[*citation*]", "--report-dir",
                     str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    found = statuses(tmp_path / "r")
    assert found and all(k.startswith("read.cite.blocks[") and "citation" in k for k in found)


@pytest.mark.parametrize("args", [["--impl", "nonsense"], ["--area", "bogus"],
                                  ["--expectations", "missing.toml"]])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    result = run_cli("run", *args, "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]


def test_mutant_is_nonconformant_and_expectations_make_it_conformant(tmp_path: Path) -> None:
    impl = "python:memconform.mutants.m07_alias_ignored:factory"
    first = run_cli("run", "-q", "--area", "config", "--impl", impl, "--report-dir",
                    str(tmp_path / "r1"), cwd=tmp_path)
    assert first.returncode == 1
    failing = [k for k, v in statuses(tmp_path / "r1").items() if v == "fail"]
    assert failing == ["config.alias[no_memories_if_mcp_or_web_search]"]
    exp = tmp_path / "exp.toml"
    made = run_cli("update-expectations", str(tmp_path / "r1" / "report.jsonl"), str(exp),
                   cwd=tmp_path)
    assert made.returncode == 0 and "1 new" in made.stdout
    second = run_cli("run", "-q", "--area", "config", "--impl", impl, "--expectations",
                     str(exp), "--report-dir", str(tmp_path / "r2"), cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-2000:]
    assert statuses(tmp_path / "r2")[failing[0]] == "xfail"
    # the same file against the fixed reference: the expected failure passes -> xpass -> 1
    third = run_cli("run", "-q", "--area", "config", "--expectations", str(exp),
                    "--report-dir", str(tmp_path / "r3"), cwd=tmp_path)
    assert third.returncode == 1
    assert statuses(tmp_path / "r3")[failing[0]] == "xpass"


def test_broken_adapter_exits_3_with_errors_only(tmp_path: Path) -> None:
    impl = f"exec:{sys.executable} -m memconform.broken.non_json"
    result = run_cli("smoke", "-q", "--impl", impl, "--adapter-timeout", "5", "--report-dir",
                     str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 3
    found = statuses(tmp_path / "r")
    assert found and set(found.values()) == {"error"}


def test_list_json_prints_every_check_with_metadata(tmp_path: Path) -> None:
    result = run_cli("list", "--json", cwd=tmp_path)
    assert result.returncode == 0
    checks = json.loads(result.stdout)["checks"]
    assert checks and all(set(c) >= {"id", "area", "level", "rules", "title", "since"}
                          for c in checks)
    only = json.loads(run_cli("list", "--json", "--area", "store", cwd=tmp_path).stdout)
    assert {c["area"] for c in only["checks"]} == {"store"}


@pytest.mark.parametrize("fmt", ["md", "table", "json"])
def test_summary_formats(ref_run: tuple[int, Path, str], tmp_path: Path, fmt: str) -> None:
    result = run_cli("summary", str(ref_run[1] / "report.jsonl"), "--format", fmt,
                     cwd=tmp_path)
    assert result.returncode == 0
    if fmt == "json":
        data = json.loads(result.stdout)
        assert data["agreement"]["passed"] == data["agreement"]["run"] > 0
    else:
        assert "config" in result.stdout


def test_summary_of_a_missing_report_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("summary", str(tmp_path / "nope.jsonl"), cwd=tmp_path)
    assert result.returncode == 2 and "no such report" in result.stderr


def test_an_unknown_id_suggests_each_near_id_once() -> None:
    from memconform.selection import unknown_ids

    [problem] = unknown_ids(["p1.job.floored-nov"], ["p1.job.floored-now[success]",
                                                      "p1.job.claim-floored-now"])
    hint = problem.split("did you mean ", 1)[1].rstrip("?").split(", ")
    assert len(hint) == len(set(hint)) and "p1.job.claim-floored-now" in hint, problem


def test_the_pytest_process_caches_bytecode_outside_the_sources(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from memconform.cli import bytecode_env
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    env = bytecode_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "memconform" / "pycache")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "mine"))
    assert bytecode_env()["PYTHONPYCACHEPREFIX"] == str(tmp_path / "mine")
    assert bytecode_env()["PYTHONDONTWRITEBYTECODE"] == "1"
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    assert "PYTHONPYCACHEPREFIX" not in bytecode_env()

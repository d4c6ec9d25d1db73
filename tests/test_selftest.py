"""`memconform selftest` kills every mutant, and its judges catch survivors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from memconform.mutants import Mutant, discover
from memconform.selftest import (
    Outcome,
    WarmServer,
    check_modules,
    impl_of,
    judge_broken,
    judge_mutant,
    killer_args,
    run_environment,
)

# about 80 mutant runs of a few seconds each on two workers, with room for a slow machine
SELFTEST_TIMEOUT_S = 1500


def rec(check_id: str, status: str) -> dict[str, str]:
    return {"id": check_id, "status": status}


@pytest.mark.timeout(SELFTEST_TIMEOUT_S + 60)
def test_selftest_kills_every_mutant(tmp_path: Path) -> None:
    result = run_cli("selftest", "--report-dir", str(tmp_path / "s"), cwd=tmp_path,
                     timeout=SELFTEST_TIMEOUT_S)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "all killed" in result.stdout
    assert len(discover()) >= 5


def test_judge_flags_survivors_and_silent_killers() -> None:
    mutant = Mutant("m", "d", ("a.check", "b.check"))
    survived = Outcome("m", 0, [rec("a.check[x]", "pass"), rec("b.check", "pass")])
    assert "survived: no check failed" in judge_mutant(mutant, survived)
    partly = Outcome("m", 1, [rec("a.check[x]", "fail"), rec("b.check", "pass")])
    assert judge_mutant(mutant, partly) == ["declared killer b.check did not fail"]
    unknown = Outcome("m", 1, [rec("a.check", "fail")])
    assert judge_mutant(mutant, unknown) == ["declared killer b.check matches no check"]
    erred = Outcome("m", 3, [rec("a.check", "fail"), rec("b.check", "fail"),
                             rec("c", "error")])
    assert judge_mutant(mutant, erred) == ["checks errored: ['c']"]
    assert judge_mutant(mutant, Outcome("m", 1, [rec("a.check", "fail"),
                                                 rec("b.check[1]", "fail")])) == []


def test_judge_broken_wants_errors_and_exit_3() -> None:
    assert judge_broken(Outcome("b", 3, [rec("x", "error")])) == []
    assert judge_broken(Outcome("b", 3, [rec("x", "pass")])) == ["non-error statuses: ['x=pass']"]
    assert judge_broken(Outcome("b", 1, [rec("x", "error")])) == ["exit code 1, expected 3"]
    assert judge_broken(Outcome("b", 3, [])) == ["no check records"]


def test_runs_cache_bytecode_in_their_own_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = run_environment(tmp_path / "pyc")
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pyc")


def test_a_forked_mutant_run_leaves_the_fork_server_clean(tmp_path: Path) -> None:
    """The fork server runs a mutant, then the reference on the same checks: the mutant's
    patches stayed in its own forked run, so the reference passes where the mutant failed."""
    module, mutant = next((module, m) for module, m in discover()
                          if m.id == "m01-idle-hours-unclamped")
    modules = check_modules()
    server = WarmServer(run_environment(tmp_path / "pyc"))
    try:
        killed = server.run(mutant.id, killer_args(mutant, impl_of(module, mutant),
                                                   tmp_path / "mutant", modules),
                            tmp_path / "mutant")
        clean = server.run("ref", killer_args(mutant, "ref", tmp_path / "ref", modules),
                           tmp_path / "ref")
    finally:
        server.close()
    assert judge_mutant(mutant, killed) == []
    assert clean.records and {r["status"] for r in clean.records} == {"pass"}
    assert server.proc.returncode == 0

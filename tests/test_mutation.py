"""`memconform selftest --mutation`: mutmut over memref, the triage file, the cache."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from conftest import run_cli
from memconform.mutation import ledger, results, runner, triage, workspace

needs_mutmut = pytest.mark.skipif(importlib.util.find_spec("mutmut") is None,
                                  reason="mutmut is not installed (extra `mutation`)")


def entry(key: str, diff: str = "-a\n+b", reason: str = "r") -> triage.Equivalent:
    return triage.Equivalent(key, reason, diff)


@pytest.mark.parametrize(("text", "problem"), [
    ('[[mutant]]\nid = "a"\nreason = "r"\n', "exactly the keys id, reason, diff"),
    ('[[mutant]]\nid = "a"\nreason = ""\ndiff = "d"\n', "non-empty strings"),
    ('[[mutant]]\nid = "a"\nreason = "r"\ndiff = "d"\n' * 2, "a is listed twice"),
    ("[mutants]\n", "unknown top-level keys"),
    ("id = \n", "not TOML"),
])
def test_a_bad_triage_file_is_one_clear_error(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "eq.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(triage.TriageError, match=problem):
        triage.load(path)


def test_the_shipped_triage_file_loads() -> None:
    assert isinstance(triage.load(triage.default_file()), dict)


def test_triage_covers_only_a_survivor_with_the_same_diff() -> None:
    mutants = [results.Mutant("m.f__mutmut_1", "m", results.SURVIVED),
               results.Mutant("m.f__mutmut_2", "m", results.SURVIVED),
               results.Mutant("m.f__mutmut_3", "m", results.KILLED),
               results.Mutant("m.f__mutmut_4", "m", results.NO_TESTS)]
    verdict = results.judge(
        mutants, {"m.f__mutmut_1": entry("m.f__mutmut_1"),
                  "m.f__mutmut_2": entry("m.f__mutmut_2", diff="-x\n+y"),
                  "m.f__mutmut_3": entry("m.f__mutmut_3"),
                  "m.gone__mutmut_1": entry("m.gone__mutmut_1"),
                  "other.f__mutmut_1": entry("other.f__mutmut_1")},
        {"m.f__mutmut_1": "-a\n+b\n", "m.f__mutmut_2": "-a\n+b", "m.f__mutmut_4": "-c\n+d"})
    assert [m.status for m in verdict.mutants] == [
        results.EQUIVALENT, results.SURVIVED, results.KILLED, results.NO_TESTS]
    assert [m.id for m in verdict.untriaged] == ["m.f__mutmut_2", "m.f__mutmut_4"]
    assert verdict.stale == [
        "m.f__mutmut_2: its diff changed (the code changed; triage it again)",
        "m.f__mutmut_3: killed, not a survivor (remove the entry)",
        "m.gone__mutmut_1: no such mutant (the code changed; triage it again)"]
    # equivalents leave the score's denominator; survivors stay in it
    assert verdict.score() == pytest.approx(1 / 3)
    assert verdict.counts()[results.EQUIVALENT] == 1


def test_sync_touches_only_what_changed_and_a_changed_suite_retries_survivors(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    settings = workspace.Settings(only=("usage.py",))
    changed, forgotten = workspace.prepare(work, settings)
    assert "usage.py" in changed and forgotten == 0
    copy = work / "src" / "memref" / "usage.py"
    os.utime(copy, (1, 1))
    stray = work / "src" / "memref" / "gone.py"
    stray.write_text("x = 1\n", encoding="utf-8")
    changed, _ = workspace.prepare(work, settings)
    assert changed == ["gone.py"] and not stray.exists()
    assert copy.stat().st_mtime == 1, "an unchanged file keeps its time (mutmut reuses it)"
    assert 'only_mutate = ["src/memref/usage.py"]' in (work / "pyproject.toml").read_text()

    meta = work / "mutants" / "src" / "memref" / "usage.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"k1": 1, "k2": 0, "k3": 33, "k4": None, "k5": 36}
    meta.write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")
    (work / workspace.SUITE_STAMP).write_text("an older suite\n", encoding="utf-8")
    _, forgotten = workspace.prepare(work, settings)
    assert forgotten == 3
    assert json.loads(meta.read_text())["exit_code_by_key"] == {
        "k1": 1, "k2": None, "k3": None, "k4": None, "k5": None}
    _, forgotten = workspace.prepare(work, settings)
    assert forgotten == 0, "the same suite keeps every verdict"


def test_a_code_change_retraces_every_check_and_retries_survivors(tmp_path: Path) -> None:
    work = tmp_path / "work"
    settings = workspace.Settings(only=("usage.py",))
    workspace.prepare(work, settings)
    meta = work / "mutants" / "src" / "memref" / "usage.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {"k1": 1, "k2": 0}}), encoding="utf-8")
    stats = work / "mutants" / "mutmut-stats.json"
    stats.write_text(json.dumps({
        "tests_by_mangled_function_name": {"memref.usage.x_f": ["checks/test_a.py::test_a"]},
        "duration_by_test": {"checks/test_a.py::test_a": 0.5},
        "function_dependencies": {"memref.usage.x_f": ["memref.usage.x_g"]},
        "function_hashes": {"memref.usage.x_f": "abc"}}), encoding="utf-8")
    _, forgotten = workspace.prepare(work, settings)
    assert forgotten == 0, "nothing changed: every verdict and the test mapping are kept"
    assert json.loads(stats.read_text())["duration_by_test"]
    (work / "src" / "memref" / "usage.py").write_text("changed = True\n", encoding="utf-8")
    changed, forgotten = workspace.prepare(work, settings)
    assert changed == ["usage.py"] and forgotten == 1
    assert json.loads(meta.read_text())["exit_code_by_key"] == {"k1": 1, "k2": None}
    data = json.loads(stats.read_text())
    assert data["tests_by_mangled_function_name"] == {} and data["duration_by_test"] == {}, \
        "after a code change mutmut must trace every check again, not only new ones"
    assert data["function_hashes"] == {"memref.usage.x_f": "abc"}, \
        "the function hashes, which tell mutmut what changed, are kept"


@needs_mutmut
def test_mutants_no_check_reaches_are_survivors_until_triaged(tmp_path: Path) -> None:
    """usage.py's mutants against the store checks only: none is reached, all survive as
    `no tests`; listing one with its diff makes it equivalent, a wrong diff makes it stale."""
    args = ["selftest", "--mutation", "--only", "usage.py", "--area", "store",
            "--cache-dir", str(tmp_path / "cache"), "--budget", "600"]
    nothing = tmp_path / "nothing.toml"
    nothing.write_text("", encoding="utf-8")
    first = run_cli(*args, "--equivalent", str(nothing), "--report-dir", str(tmp_path / "r1"),
                    cwd=tmp_path, timeout=900)
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-3000:]
    report = json.loads((tmp_path / "r1" / "mutation" / "mutation.json").read_text())
    # the four SQL letter-case mutants are proved equivalent by class, the rest reach no check
    assert report["complete"] and report["counts"][results.EQUIVALENT] == 4
    unreached = [m for m in report["mutants"] if m["status"] == results.NO_TESTS]
    assert len(unreached) + 4 == len(report["mutants"])
    survivor = unreached[0]
    assert survivor["diff"].startswith("---") and "memref/usage.py" in survivor["diff"]
    assert f"### {survivor['id']} (no tests)" in (
        tmp_path / "r1" / "mutation" / "MUTATION.md").read_text()

    eq = tmp_path / "eq.toml"
    untriaged = tomllib.loads((tmp_path / "r1" / "mutation" / "untriaged.toml").read_text())
    assert [e["id"] for e in untriaged["mutant"]] == [m["id"] for m in unreached]
    first_entry = {**untriaged["mutant"][0], "reason": "not reached by the store checks"}
    eq.write_text(tomli_w.dumps({"mutant": [first_entry]}), encoding="utf-8")
    second = run_cli(*args, "--equivalent", str(eq), "--report-dir", str(tmp_path / "r2"),
                     cwd=tmp_path, timeout=900)
    report = json.loads((tmp_path / "r2" / "mutation" / "mutation.json").read_text())
    assert report["counts"][results.EQUIVALENT] == 5
    assert second.returncode == 1, "the other survivors are still untriaged"

    eq.write_text(f'[[mutant]]\nid = "{survivor["id"]}"\nreason = "r"\ndiff = "-a\\n+b"\n',
                  encoding="utf-8")
    third = run_cli(*args, "--equivalent", str(eq), "--report-dir", str(tmp_path / "r3"),
                    cwd=tmp_path, timeout=900)
    assert "stale triage entry" in third.stdout and "its diff changed" in third.stdout


@needs_mutmut
def test_every_mutant_of_the_usage_module_is_killed_or_triaged(tmp_path: Path) -> None:
    """The CI subset of `tox -e mutation`: memref.usage against the read checks, judged with
    the shipped equivalent-mutant file; its four SQL letter-case mutants are proved
    equivalent by the sql-letter-case class."""
    kills = tmp_path / "ledger.json"
    result = run_cli("selftest", "--mutation", "--only", "usage.py", "--area", "read",
                     "--cache-dir", str(tmp_path / "cache"), "--report-dir", str(tmp_path / "r"),
                     "--ledger", str(kills), "--budget", "900", cwd=tmp_path, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "kill ledger not used" in result.stdout, "a part of the suite takes no kills"
    report = json.loads((tmp_path / "r" / "mutation" / "mutation.json").read_text())
    assert report["score"] == 1.0 and report["complete"]
    killed = sorted(m["id"] for m in report["mutants"] if m["status"] == results.KILLED)
    assert len(killed) >= 6
    assert report["counts"][results.EQUIVALENT] == 4

    # the kills went to the ledger
    recorded = ledger.load(kills)["files"]["src/memref/usage.py"]
    assert sorted(f"memref.usage.{name}__mutmut_{n}" for name, entry in recorded.items()
                  for n in entry["killed"]) == killed


def test_the_ledger_seeds_only_functions_whose_hash_is_unchanged(tmp_path: Path) -> None:
    """Kills of a function whose recorded hash is its hash in the source are marked done;
    a changed function's, a file outside the run's scope, and another mutmut's are not."""
    from mutmut.mutation.file_mutation import compute_function_hashes

    work = tmp_path / "work"
    settings = workspace.Settings(only=("jobs.py",))
    workspace.prepare(work, settings)
    source = (work / "src" / "memref" / "jobs.py").read_text(encoding="utf-8")
    same, changed = sorted(compute_function_hashes(source))[:2]
    hashes = compute_function_hashes(source)
    usage_entry = {"x_record_usage": {"hash": "0", "killed": [1]}}
    kills: dict[str, Any] = {"mutmut": ledger.mutmut_version(), "files": {
        "src/memref/jobs.py": {same: {"hash": hashes[same], "killed": [1, 3]},
                                changed: {"hash": "000000000000", "killed": [1]}},
        "src/memref/usage.py": usage_entry}}
    assert ledger.seed(work, {**kills, "mutmut": "0.0"}, settings.mutates) == 0
    assert ledger.seed(work, kills, settings.mutates) == 2
    meta = json.loads((work / "mutants" / "src" / "memref" / "jobs.py.meta").read_text())
    assert meta["exit_code_by_key"] == {f"memref.jobs.{same}__mutmut_1": 1,
                                        f"memref.jobs.{same}__mutmut_3": 1}
    assert not (work / "mutants" / "src" / "memref" / "usage.py.meta").exists()

    # a verdict mutmut has for the same code is kept; recording keeps every kill of the code
    # as it is (the ledger's and mutmut's), drops the changed function's stale entry, and
    # leaves a file outside the run as the ledger has it
    meta["exit_code_by_key"][f"memref.jobs.{same}__mutmut_3"] = 0
    meta["exit_code_by_key"][f"memref.jobs.{changed}__mutmut_2"] = 1
    meta["hash_by_function_name"][changed] = hashes[changed]
    (work / "mutants" / "src" / "memref" / "jobs.py.meta").write_text(json.dumps(meta))
    assert ledger.seed(work, kills, settings.mutates) == 0
    after = ledger.record(work, kills, settings.mutates)["files"]
    assert after["src/memref/jobs.py"] == {
        same: {"hash": hashes[same], "killed": [1, 3]},
        changed: {"hash": hashes[changed], "killed": [2]}}
    assert after["src/memref/usage.py"] == usage_entry

    # verdicts of an older version of a function the ledger knows as it is now are dropped
    meta["hash_by_function_name"][same] = "0ld0ld0ld0ld"
    meta["exit_code_by_key"][f"memref.jobs.{same}__mutmut_3"] = 0
    meta["exit_code_by_key"][f"memref.jobs.{same}__mutmut_4"] = 0
    (work / "mutants" / "src" / "memref" / "jobs.py.meta").write_text(json.dumps(meta))
    assert ledger.seed(work, kills, settings.mutates) == 2
    meta = json.loads((work / "mutants" / "src" / "memref" / "jobs.py.meta").read_text())
    assert meta["hash_by_function_name"][same] == hashes[same]
    assert meta["exit_code_by_key"][f"memref.jobs.{same}__mutmut_4"] is None
    assert meta["exit_code_by_key"][f"memref.jobs.{same}__mutmut_3"] == 1

    # an unreadable verdict file (a run killed while writing it) adds nothing
    (work / "mutants" / "src" / "memref" / "jobs.py.meta").write_text("{")
    assert ledger.record(work, kills, settings.mutates)["files"]["src/memref/jobs.py"] == {
        same: {"hash": hashes[same], "killed": [1, 3]}}
    out = tmp_path / "ledger.json"
    ledger.save(out, {"mutmut": ledger.mutmut_version(), "files": after})
    assert ledger.load(out)["files"] == after


def test_a_bad_ledger_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "ledger.json"
    for text, problem in (("[", "not JSON"), ('{"mutmut": "3"}', "exactly the keys"),
                          ('{"mutmut": "3", "files": true}', "files \\(an object\\)"),
                          ('{"mutmut": "3", "files": {"a.py": []}}', "a.py: must be an object"),
                          ('{"mutmut": "3", "files": {"a.py": {"x_f": {"hash": "h", '
                           '"killed": {}}}}}', "a.py x_f"),
                          ('{"mutmut": "3", "files": {"a.py": {"x_f": {"hash": "h", '
                           '"killed": [0]}}}}', "a.py x_f")):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ledger.LedgerError, match=problem):
            ledger.load(bad)


def test_the_shipped_ledger_loads() -> None:
    assert ledger.load(ledger.default_file())["mutmut"]


def test_a_check_mutmut_cannot_rerun_by_id_makes_the_run_unusable(tmp_path: Path) -> None:
    """mutmut counts a crashed re-run as a kill; the replay guard catches a node id that
    pytest cannot find (as an installed package's ids were) before any kill is reported."""
    work = tmp_path / "work"
    workspace.prepare(work, workspace.Settings(only=("usage.py",)))
    (work / "mutants").mkdir()
    stats = work / "mutants" / "mutmut-stats.json"
    stats.write_text(json.dumps({"duration_by_test": {"test_store.py::test_separate_file": 1}}))
    problem = runner.replay_works(work)
    assert problem is not None and "exited 4" in problem and "cannot be trusted" in problem
    stats.write_text(json.dumps({"duration_by_test": {}}))
    assert runner.replay_works(work) is None, "nothing re-run by id: nothing to distrust"


@needs_mutmut
def test_a_mutmut_deadline_signals_only_the_process_it_was_set_for() -> None:
    """mutmut's own timeouts signal a pid after its process may have ended (pids wrap); the
    launcher's fire only while the pid names the same process (same start time)."""
    import signal
    import subprocess
    import time

    from memconform.mutation import launch

    mine = subprocess.Popen(["sleep", "30"])
    other = subprocess.Popen(["sleep", "30"])
    try:
        launch.register_timeout(mine.pid, 0.1)
        with launch._lock:  # as if `other` reused the pid of a process that started earlier
            launch._heap.append((time.time() + 0.1, other.pid, "0"))
            launch._lock.notify()
        assert mine.wait(timeout=10) == -signal.SIGXCPU
        time.sleep(0.5)
        assert other.poll() is None, "a process that merely reuses a pid was signalled"
    finally:
        for proc in (mine, other):
            proc.kill()
            proc.wait()


def test_sigterm_stops_mutmut_and_restores_the_handlers(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM (or SIGINT, which a run started in the background ignores) during a run stops
    mutmut's process group and ends the run; the caller's handlers are back afterwards."""
    import signal
    import threading

    from memconform.mutation import runner

    # a stand-in for the launcher, which takes back a SIGINT inherited as ignored (a run
    # started in the background, as CI may start this test; see the test below)
    stand_in = [sys.executable, "-c", "import signal, time\n"
                "signal.signal(signal.SIGINT, signal.default_int_handler)\ntime.sleep(60)"]
    monkeypatch.setattr(runner, "mutmut_command", lambda workers, names: stand_in)
    before = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            runner.run_mutmut(tmp_path, workers=1, budget_s=30)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 20, "the run did not stop at SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before


@needs_mutmut
def test_the_launcher_takes_back_an_ignored_sigint(tmp_path: Path) -> None:
    """A background run inherits an ignored SIGINT; mutmut must still get it to stop cleanly."""
    import subprocess
    import sys

    probe = ("import signal\n"
             "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
             "from memconform.mutation import launch\n"
             "import mutmut.__main__ as cli_module\n"
             "cli_module.cli = lambda: print(signal.getsignal(signal.SIGINT) is "
             "signal.default_int_handler)\n"
             "launch.main()\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["src"]\n',
                                             encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"


def test_mutants_run_in_a_zone_away_from_utc_by_hours_and_minutes() -> None:
    """A mutant that formats local time instead of UTC only shows in a zone that is not UTC;
    the zone is a POSIX string, so it works without tzdata."""
    import subprocess

    shown = subprocess.run(
        [sys.executable, "-c", "import datetime; print(datetime.datetime.fromtimestamp(0))"],
        env={**os.environ, "TZ": runner.MUTANT_TZ}, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "1970-01-01 05:45:00"


SECOND_SESSION = """
import sys
import pytest
from memref import materialize

args = ["--pyargs", "memconform.checks", "-q", "-p", "no:cacheprovider", "--impl", "ref",
        "--report-dir", sys.argv[1], "--check-id", "p2.fs.stem[v7-no-slug]"]
first = int(pytest.main(args))
materialize._uuid_time_s = lambda value: 0.0  # a mutant swapped in, as mutmut's fork does
second = int(pytest.main(args))
print("EXITS", first, second)
"""


def test_a_mutant_swapped_in_after_an_earlier_session_is_seen(tmp_path: Path) -> None:
    """mutmut runs a mutant's checks in a fork of the process that ran them on the unmutated
    code: the stem the first session remembered must not hide the mutated stem code."""
    done = subprocess.run([sys.executable, "-c", SECOND_SESSION, str(tmp_path / "report")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "EXITS 0 1" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]

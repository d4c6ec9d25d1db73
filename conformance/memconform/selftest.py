"""`memconform selftest`: prove the checks can fail.

1. The bundled reference must pass every check (a baseline with failures proves nothing), but
   the checks of rules that begin after the release it follows, which are not-implemented.
2. Every mutant must be killed: each check it declares as a killer (run alone against it)
   must fail. A mutant's run collects only the check modules that hold its killers; a local
   mutant's run is forked from a fork server that has imported pytest and the check modules
   (`memconform.warmpytest`).
3. Every broken stdio adapter must turn every check it reaches into `error`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from memconform import report as rep
from memconform import resources
from memconform.broken import NAMES as BROKEN
from memconform.listing import collect_checks
from memconform.mutants import Mutant, discover
from memconform.registry import id_covers
from memconform.selection import PROFILES
from memconform.warmpytest import READY

BROKEN_TIMEOUT_S = 3.0
LATEST = "0.171.0"  # the newest release memref follows


@dataclass
class Outcome:
    label: str
    exit_code: int
    records: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None


def run_environment(pycache: Path) -> dict[str, str]:
    """The environment of the selftest's runs: bytecode, and pytest's rewritten check modules,
    cached in `pycache` (the selftest's own scratch folder), so each of its hundreds of runs
    does not compile and rewrite every check module again (seconds per run). Nothing is
    written next to the sources, even where PYTHONDONTWRITEBYTECODE asks for that."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def _outcome(label: str, code: int, out: Path) -> Outcome:
    try:
        _, records, _ = rep.load(out / "report.jsonl")
    except rep.ReportError as exc:
        return Outcome(label, code, problem=f"{exc} (log: {out.with_suffix('.log')})")
    return Outcome(label, code, records)


def _run(label: str, command: list[str], out: Path, env: dict[str, str] | None = None) -> Outcome:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.with_suffix(".log").open("w") as handle:
        code = subprocess.call(command, stdout=handle, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env)
    return _outcome(label, code, out)


class WarmServer:
    """One `memconform.warmpytest` fork server: runs pytest one at a time, forked from it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memconform.warmpytest"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self.ready = False

    def run(self, label: str, args: list[str], out: Path) -> Outcome:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            if not self.ready:
                greeting = self.proc.stdout.readline().strip()
                if greeting != READY:
                    raise ValueError(f"it said {greeting!r} instead of {READY!r}")
                self.ready = True
            self.proc.stdin.write(json.dumps({"args": args,
                                              "log": str(out.with_suffix(".log"))}) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
            code = int(answer)
        except (OSError, ValueError) as exc:
            return Outcome(label, rep.EXIT_HARNESS, problem=f"the fork server failed "
                                                            f"(exit {self.proc.poll()}): {exc}")
        return _outcome(label, code, out)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cli_run(command: str, impl: str, out: Path, extra: list[str]) -> list[str]:
    """A `memconform COMMAND` run."""
    return [sys.executable, "-m", "memconform", command, "--impl", impl, "--report-dir",
            str(out), "-q", *extra]


def killer_args(mutant: Mutant, impl: str, out: Path, modules: dict[str, str]) -> list[str]:
    """pytest's arguments: the check modules holding the mutant's killers (`modules`: check
    id -> module), selecting the killers; a killer matching no check collects the whole
    profile, where the judge finds it matching nothing."""
    wanted = {module for check, module in modules.items()
              if any(id_covers(killer, check) for killer in mutant.killers)}
    found_all = all(any(id_covers(k, c) for c in modules) for k in mutant.killers)
    return ["--pyargs", *(sorted(wanted) if found_all and wanted else [PROFILES[mutant.profile]]),
            # the verdict is in the report: no gc passes for unraisable-exception warnings
            "-p", "no:cacheprovider", "-p", "no:unraisableexception", "--impl", impl,
            "--report-dir", str(out), "--profile", mutant.profile, "-q", "--no-header",
            "--tb=no", "--progress", "dots", "--snapshot-warn-unused",
            *(arg for killer in mutant.killers for arg in ("--check-id", killer))]


def check_modules() -> dict[str, str]:
    """Every check id (case included) -> the module that defines it."""
    return {c["id"]: c["module"] for c in collect_checks()}


def judge_mutant(mutant: Mutant, outcome: Outcome) -> list[str]:
    """Problems with one mutant run; empty when the mutant was properly killed."""
    if outcome.problem:
        return [outcome.problem]
    problems = []
    errors = [r["id"] for r in outcome.records if r["status"] in ("error", "xpass")]
    if errors:
        problems.append(f"checks errored: {errors[:5]}")
    failed = {r["id"] for r in outcome.records if r["status"] == "fail"}
    if not failed:
        problems.append("survived: no check failed")
    for killer in mutant.killers:
        matching = [c for c in (r["id"] for r in outcome.records) if id_covers(killer, c)]
        if not matching:
            problems.append(f"declared killer {killer} matches no check")
        elif not any(c in failed for c in matching):
            problems.append(f"declared killer {killer} did not fail")
    return problems


def judge_broken(outcome: Outcome) -> list[str]:
    if outcome.problem:
        return [outcome.problem]
    if not outcome.records:
        return ["no check records"]
    wrong = [f"{r['id']}={r['status']}" for r in outcome.records if r["status"] != "error"]
    problems = [f"non-error statuses: {wrong[:5]}"] if wrong else []
    if outcome.exit_code != rep.EXIT_HARNESS:
        problems.append(f"exit code {outcome.exit_code}, expected {rep.EXIT_HARNESS}")
    return problems


def impl_of(module: str, mutant: Mutant) -> str:
    """A local mutant is an in-process adapter; a cloud mutant is a service to start."""
    return f"serve:{module}" if mutant.profile == "cloud" else f"python:{module}:factory"


def _out(out_dir: Path, label: str) -> Path:
    return out_dir / label.replace(":", "-")


def run_selftest(out_dir: Path, workers: int, console: Console) -> int:
    mutants = discover()
    later = sorted({check.split("[")[0] for check in resources.later_release_checks()})
    modules = check_modules()
    baselines = [
        ("baseline", "ref", []), ("baseline-cloud", "ref", ["--profile", "cloud"]),
        # the later releases' checks, against the reference following the newest release in
        # layout v2 and in layout v1 (the mutants of those rules follow it too)
        *((f"baseline-{LATEST}-{layout}", f"ref@{LATEST}/{layout}",
           [arg for check in later for arg in ("--id", check)]) for layout in ("v1", "v2"))]
    jobs = [(label, cli_run("run", impl, _out(out_dir, label), extra))
            for label, impl, extra in baselines]
    # a mutant runs only its declared killers: enough to see it killed, and each must fail;
    # a local one is forked from a process that has pytest and the check modules imported
    jobs += [(m.id, killer_args(m, impl_of(module, m), _out(out_dir, m.id), modules))
             for module, m in mutants]
    local = {m.id for _, m in mutants if m.profile == "local"}
    jobs += [(f"broken:{name}",
              cli_run("smoke", f"exec:{sys.executable} -m memconform.broken.{name}",
                      _out(out_dir, f"broken:{name}"),
                      ["--adapter-timeout", str(BROKEN_TIMEOUT_S)])) for name in BROKEN]
    with tempfile.TemporaryDirectory(prefix="memconform-selftest-pycache-") as pycache, \
            ThreadPoolExecutor(max_workers=workers) as pool:
        env = run_environment(Path(pycache))
        servers: queue.Queue[WarmServer] = queue.Queue()
        started = [WarmServer(env) for _ in range(workers)]
        for server in started:
            servers.put(server)

        def one(job: tuple[str, list[str]]) -> Outcome:
            label, args = job
            if label in local:
                server = servers.get()
                try:
                    return server.run(label, args, _out(out_dir, label))
                finally:
                    servers.put(server)
            command = args if args[0] == sys.executable \
                else [sys.executable, "-m", "pytest", *args]
            return _run(label, command, _out(out_dir, label), env)

        try:
            outcomes = list(pool.map(one, jobs))
        finally:
            for server in started:
                server.close()
    by_label = {o.label: o for o in outcomes}
    failures = 0
    for label in ("baseline", "baseline-cloud", f"baseline-{LATEST}-v1", f"baseline-{LATEST}-v2"):
        baseline = by_label[label]
        # the reference follows the baseline release: later releases' checks do not apply;
        # following the newest release, the checks of the other layout do not
        excused = resources.later_release_checks() if label in ("baseline", "baseline-cloud") \
            else resources.layout_checks("v2" if label.endswith("v1") else "v1")
        base_bad = baseline.problem or [
            r["id"] for r in baseline.records
            if r["status"] != "pass" and not (r["status"] == "not-implemented"
                                              and r["id"] in excused)]
        if base_bad:
            console.print(f"[red]{label} is not clean:[/red] {base_bad}")
            failures += 1
    baseline = by_label["baseline"]
    table = Table(title="kill matrix")
    for column in ("mutant", "checks failed", "declared killers", "verdict"):
        table.add_column(column, overflow="fold")
    for _, mutant in mutants:
        outcome = by_label[mutant.id]
        problems = judge_mutant(mutant, outcome)
        failed = sum(r["status"] == "fail" for r in outcome.records)
        failures += bool(problems)
        table.add_row(mutant.id, str(failed), ", ".join(mutant.killers),
                      "[green]killed[/green]" if not problems else
                      "[red]" + "; ".join(problems) + "[/red]")
    for name in BROKEN:
        outcome = by_label[f"broken:{name}"]
        problems = judge_broken(outcome)
        failures += bool(problems)
        table.add_row(f"broken:{name}", f"{len(outcome.records)} error",
                      "(all must error)", "[green]all error[/green]" if not problems else
                      "[red]" + "; ".join(problems) + "[/red]")
    console.print(table)
    console.print(f"{len(mutants)} mutants, {len(BROKEN)} broken adapters, baselines "
                  f"{len(baseline.records)} + {len(by_label['baseline-cloud'].records)} checks: "
                  + ("all killed" if failures == 0 else f"{failures} problem(s)"))
    return 0 if failures == 0 else 1

"""`memconform selftest --mutation`: prepare, run mutmut within the budget, triage, report."""

from __future__ import annotations

import datetime as dt
import fnmatch
import importlib.metadata
import re
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from memconform.mutation import ledger, results, runner, triage, workspace

EXIT_OK, EXIT_SURVIVORS, EXIT_INCOMPLETE = 0, 1, 3
NO_TEST_REACHES = "could not find any test case for any mutant"
MUTANT_ID = re.compile(r"memref\.[\w.*\u01c1]+__mutmut_[\d*]+|memref\.[\w.*\u01c1]*\*")


def run_mutation(*, report_dir: Path, cache_dir: Path, workers: int, budget_s: float,
                 settings: workspace.Settings, equivalent_file: Path | None, fresh: bool,
                 console: Console, ledger_file: Path | None = None,
                 names: tuple[str, ...] = ()) -> int:
    """0 when every mutant was tried and each survivor is triaged; 1 when a survivor is not
    triaged or a triage entry is stale; 3 when the budget ran out first.

    The kill ledger (`ledger_file`, else the shipped one) seeds a run of the whole suite
    unless `fresh`; the run's kills are written back to it only when it is given explicitly,
    also when the run is interrupted, and only once mutmut's way of re-running checks was
    seen to work (else its kills cannot be trusted). With `names` (mutant ids or globs) only
    those mutants are tried, and the exit code speaks of them alone."""
    for name in names:
        if not MUTANT_ID.fullmatch(name):
            raise workspace.WorkspaceError(
                f"--mutant {name!r} is not a mutant id such as "
                "memref.phase1.x_run_job__mutmut_24 (globs with '*' allowed)")
    equivalent_file = equivalent_file or triage.default_file()
    equivalents = triage.load(equivalent_file)
    kills = ledger.load(ledger_file or ledger.default_file())
    work = cache_dir / settings.scope
    changed, forgotten = workspace.prepare(work, settings, fresh=fresh)
    retried = f", {forgotten} verdicts retried (the code or the suite changed)" if forgotten else ""
    console.print(f"mutation cache {escape(str(work))}: {len(changed)} source files changed"
                  + retried)
    # a kill by some areas' checks is a kill by the whole suite, not the other way round
    seeded = 0 if fresh or settings.areas else ledger.seed(work, kills, settings.mutates)
    if settings.areas and not fresh:
        console.print("kill ledger not used: the run's checks are a part of the suite (--area)")
    elif kills["mutmut"] != ledger.mutmut_version():
        console.print(f"kill ledger not used: written by mutmut {kills['mutmut']}, this is "
                      f"{ledger.mutmut_version()}")
    elif seeded:
        console.print(f"kill ledger: {seeded} kills of unchanged functions taken as done")
    trusted: list[bool] = []
    try:
        return _run(work, report_dir, workers, budget_s, settings, equivalent_file,
                    equivalents, console, seeded, trusted, names)
    finally:
        if ledger_file is not None and trusted:
            ledger.save(ledger_file, ledger.record(work, kills, settings.mutates))


def _run(work: Path, report_dir: Path, workers: int, budget_s: float,
         settings: workspace.Settings, equivalent_file: Path,
         equivalents: dict[str, triage.Equivalent], console: Console, seeded: int,
         trusted: list[bool], names: tuple[str, ...] = ()) -> int:
    """The run and its report; appends to `trusted` once the kills are known to be real."""

    def progress() -> None:
        counts = results.Verdict(results.collect(work)).counts()
        done = sum(counts.values()) - counts[results.NOT_CHECKED]
        console.print(f"  {done}/{sum(counts.values())} mutants tried, "
                      f"{counts[results.SURVIVED] + counts[results.NO_TESTS]} not killed")

    try:
        outcome = runner.run_mutmut(work, workers=workers, budget_s=budget_s, progress=progress,
                                    names=names)
    except KeyboardInterrupt as exc:
        console.print(f"[red]interrupted[/red] ({escape(str(exc) or 'SIGINT')}): mutmut was "
                      "stopped; the cache keeps the verdicts it saved (run again to go on)")
        if runner.replay_works(work) is None:
            trusted.append(True)
        return EXIT_INCOMPLETE
    broken = runner.replay_works(work)
    if broken is not None:
        console.print(f"[red]mutation run unusable:[/red] {escape(broken)}")
        return EXIT_INCOMPLETE
    trusted.append(True)
    mutants = results.collect(work)
    if not mutants:
        console.print(f"[red]mutmut produced no results[/red] (exit {outcome.exit_code}); "
                      f"see {escape(str(outcome.log))}")
        return EXIT_INCOMPLETE
    unreached = not outcome.budget_spent and NO_TEST_REACHES in outcome.log.read_text(
        encoding="utf-8", errors="replace")
    if unreached:
        # mutmut stops (exit 1) before its first mutant when no selected check reaches any
        for mutant in mutants:
            if mutant.status == results.NOT_CHECKED:
                mutant.status = results.NO_TESTS
    undetected = [m.id for m in mutants if m.status in results.UNDETECTED]
    verdict = results.judge(mutants, equivalents, results.diffs(work, undetected),
                            results.source_reader(work))
    facts = {"date": dt.date.today().isoformat(), "mutmut": importlib.metadata.version("mutmut"),
             "scope": settings.scope, "areas": list(settings.areas), "only": list(settings.only),
             "workers": workers, "seconds": round(outcome.seconds, 1),
             "budget_spent": outcome.budget_spent, "equivalent_file": str(equivalent_file),
             "ledger_kills": seeded,
             "excluded": workspace.SCOPES[settings.scope]}
    results.write(report_dir, verdict, facts)
    counts = verdict.counts()
    score = verdict.score()
    console.print(", ".join(f"{counts[s]} {s}" for s in results.STATUSES if counts[s])
                  + f"; score {'—' if score is None else f'{100 * score:.1f} %'}; "
                  f"report in {escape(str(report_dir / 'MUTATION.md'))}")
    for line in verdict.stale:
        console.print(f"[yellow]stale triage entry:[/yellow] {escape(line)}")
    for mutant in verdict.untriaged[:20]:
        console.print(f"[red]{mutant.status}:[/red] {escape(mutant.id)}")
    if names:
        return _named(mutants, verdict, names, console)
    if outcome.budget_spent and not verdict.complete:
        console.print("[red]incomplete:[/red] the budget ran out before every mutant was tried "
                      "(run again: the cache keeps what was done)")
        return EXIT_INCOMPLETE
    if not verdict.complete or (outcome.exit_code not in (0, None) and not unreached):
        console.print(f"[red]incomplete:[/red] mutmut stopped (exit {outcome.exit_code}) "
                      f"before trying every mutant; see {escape(str(outcome.log))}")
        return EXIT_INCOMPLETE
    return EXIT_SURVIVORS if verdict.untriaged or verdict.stale else EXIT_OK


def _named(mutants: list[results.Mutant], verdict: results.Verdict, names: tuple[str, ...],
           console: Console) -> int:
    """The verdict on the mutants a `--mutant` run asked for: 0 when each was killed, timed out
    or is triaged, 1 when one is not, 3 when one was not tried or none matched."""
    chosen = [m for m in mutants if any(fnmatch.fnmatchcase(m.id, n) for n in names)]
    untriaged = {m.id for m in verdict.untriaged}
    for mutant in chosen:
        console.print(f"  {escape(mutant.id)}: {mutant.status}"
                      + (" (untriaged)" if mutant.id in untriaged else ""))
    if not chosen:
        console.print("[red]no mutant matches[/red] " + escape(", ".join(names)))
        return EXIT_INCOMPLETE
    if any(m.status == results.NOT_CHECKED for m in chosen):
        return EXIT_INCOMPLETE
    return EXIT_SURVIVORS if any(m.id in untriaged for m in chosen) else EXIT_OK

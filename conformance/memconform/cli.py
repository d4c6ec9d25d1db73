"""The `memconform` command line."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memconform import report as rep
from memconform import resources
from memconform.expectations import NEW_REASON, Expectations, ExpectationsError, updated
from memconform.registry import AREAS
from memconform.selection import PROFILES, pattern, unknown_ids

if TYPE_CHECKING:
    from memconform.codex.releases import Release

LOCAL_AREAS = sorted(a for a in AREAS if not a.startswith("cloud."))

console = Console(stderr=True)
DIFF_HYPOTHESIS_SEED = 20261204
SHORT = {"unsupported": "unsup.", "not-implemented": "n/impl"}
IMPL_HELP = ("ref (default), python:MODULE:FACTORY, exec:COMMAND, "
             "codex[@VERSION][/LAYOUT][:PATH]")


def _progress_mode(quiet: bool, progress: bool) -> str:
    """One character per check with -q; a live display on a terminal; else one line each."""
    if quiet:
        return "dots"
    return "live" if progress and sys.stdout.isatty() else "lines"


def _codex_release(impl: str) -> tuple[Release, str] | None:
    """For `--impl codex…`: the release and layout it runs. A `codex@VERSION` not installed
    yet is installed here, once, before any worker starts; a binary given by path (or
    $MEMCONFORM_CODEX_BIN) is asked its release."""
    from memconform.codex import binary, releases

    head = impl.partition(":")[0]
    if head != "codex" and not head.startswith(("codex@", "codex/")):
        return None
    try:
        version, layout, path = binary.parse_spec(impl)
        if version is not None and path is None \
                and not (binary.npm_dir(version) / binary.VENDORED).is_file():
            console.print(f"installing Codex {version} (npm) into "
                          f"{escape(str(binary.npm_dir(version)))}")
        if path is not None or version is not None or os.environ.get(binary.BIN_ENV):
            _, release = binary.locate(path, version)
        else:
            release = releases.get(releases.DEFAULT)
    except (binary.CodexBinaryError, releases.ReleaseError) as exc:
        raise click.UsageError(str(exc)) from None
    return release, layout or "v1"


def _expectations_for(impl: str, given: Path | None) -> Path | None:
    """`given`, else the bundled expectations file of the Codex release `--impl codex…` runs."""
    found = _codex_release(impl)
    if given is not None or found is None:
        return given
    release, layout = found
    bundled = release.expectations_for(layout)
    if bundled is None:
        console.print(f"no bundled expectations for Codex {release.version} (layout {layout}) "
                      f"yet: every divergence from the rules shows as a fail")
        return None
    path = resources.doc(bundled)
    console.print(f"using the bundled expectations for Codex {release.version} (layout "
                  f"{layout}): {escape(str(path))}")
    return path


def _pytest_args(impl: str, areas: tuple[str, ...], ids: tuple[str, ...],
                 matches: tuple[str, ...], expectations: Path | None, report_dir: Path,
                 workers: int, smoke: bool, strict: bool, timeout: float, quiet: bool,
                 verbose: bool = False, keep: Path | None = None, profile: str = "local",
                 cloud_db: str = "sqlite", startup_timeout: float = 60.0,
                 progress: bool = True) -> list[str]:
    args = [sys.executable, "-m", "pytest", "--pyargs", PROFILES[profile], "-p",
            "no:cacheprovider", "--impl", impl, "--report-dir", str(report_dir),
            "--adapter-timeout", str(timeout), "--startup-timeout", str(startup_timeout),
            "--profile", profile, "--cloud-db", cloud_db,
            "-q", "--no-header", "-rN", "--progress", _progress_mode(quiet, progress),
            "--snapshot-warn-unused"]  # a check that fails early never reads its snapshot
    if verbose:
        args += ["--mc-traceback", "--tb=long"]
    else:
        args.append("--tb=no")
    if keep is not None:
        args += ["--keep", str(keep)]
    for area in areas:
        args += ["--area", area]
    for check_id in ids:
        args += ["--check-id", check_id]
    for match in matches:
        args += ["--match", match]
    if expectations:
        args += ["--expectations", str(expectations)]
    if workers:
        args += ["-n", str(workers)]
    if smoke:
        args.append("--smoke-checks")
    if strict:
        args.append("--strict-expectations")
    return args


def _table(records: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=escape(title), caption="unsup. = unsupported, "
                  "n/impl = not-implemented")
    table.add_column("area")
    for status in rep.STATUSES:
        table.add_column(SHORT.get(status, status), justify="right")
    for area, tally in rep.by_area(records).items():
        table.add_row(escape(area), *(str(tally[s]) for s in rep.STATUSES))
    total = rep.counts(records)
    table.add_row("[bold]all[/bold]", *(f"[bold]{total[s]}[/bold]" for s in rep.STATUSES))
    return table


_FORWARDED = {signal.SIGINT, signal.SIGTERM}


def _default_sigint() -> None:
    """In the child: SIGINT does what it does in a terminal even when this process was
    started with it ignored (a background job), so pytest sees Ctrl-C; and the signals the
    parent blocked while starting it are unblocked."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _FORWARDED)


def bytecode_env() -> dict[str, str]:
    """Where PYTHONDONTWRITEBYTECODE keeps bytecode from being written beside the sources, a
    Python process the harness starts (pytest; `memref` in the bench) writes it, pytest's
    rewritten check modules included, to memconform's cache folder instead, unless
    PYTHONPYCACHEPREFIX names a folder: collecting the checks took 4.8 s without that cache
    and 1.9 s with it."""
    env = dict(os.environ)
    if env.get("PYTHONDONTWRITEBYTECODE") and not env.get("PYTHONPYCACHEPREFIX"):
        from memconform.codex.binary import cache_dir
        del env["PYTHONDONTWRITEBYTECODE"]
        env["PYTHONPYCACHEPREFIX"] = str(cache_dir() / "pycache")
    return env


def _pytest(args: list[str]) -> int:
    """Run pytest in its own process group; Ctrl-C or SIGTERM here becomes one SIGINT to the
    whole group, so the run stops the way pytest stops on Ctrl-C and writes its footer.
    The signals are blocked until the group exists and the handler is set: one that came
    while pytest was being started waits for that instead of being lost."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _FORWARDED)
    try:
        child = subprocess.Popen(args, start_new_session=True, preexec_fn=_default_sigint,
                                 env=bytecode_env())
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        raise
    interrupted = False

    def forward(signum: int, frame: Any) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGINT)

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        return child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _execute(args: list[str], report_dir: Path, strict: bool) -> int:
    # an earlier run's report must not pass for this one's if this run stops before it writes
    # its own (the plugin reports a directory it cannot write)
    with contextlib.suppress(OSError):
        rep.remove_previous(report_dir)
    code = _pytest(args)
    if code == 5:
        console.print("[red]memconform: no checks selected[/red] (check --area / --id / -k)")
        return rep.EXIT_USAGE
    if code == 4:
        return rep.EXIT_USAGE
    path = report_dir / "report.jsonl"
    if not path.exists():
        console.print(f"[red]memconform: INCOMPLETE RUN: the run stopped before it started "
                      f"its report (pytest exit {code})[/red]; no verdict")
        return rep.EXIT_HARNESS
    try:
        header, records, footer = rep.load(path, allow_incomplete=True)
        reason = rep.incomplete_reason(rep.read_lines(path))
    except rep.ReportError as exc:
        console.print(f"[red]memconform: {escape(str(exc))}[/red] (pytest exit {code})")
        return rep.EXIT_HARNESS
    impl = header["implementation"]
    console.print(_table(records, f"{impl.get('name', impl['spec'])} "
                                  f"{impl.get('version', '')}".strip()))
    passed, ran = rep.agreement(records)
    console.print(f"agreement: {passed}/{ran} checks run; report in {escape(str(report_dir))}")
    for line in rep.conformance_lines(records):
        console.print(f"  {escape(line)}")
    if "handshake_error" in impl:
        console.print(f"[red]handshake failed:[/red] {escape(impl['handshake_error'])}")
    stale = footer.get("stale_expectations", [])
    for key in stale:
        console.print(f"[yellow]stale expectation:[/yellow] {escape(key)} (covers no check, "
                      "or nothing under it fails)")
    if reason is not None:
        console.print(f"[red]memconform: INCOMPLETE RUN: {escape(reason)}[/red]; no verdict")
        return rep.EXIT_HARNESS
    return rep.exit_code(records, stale, strict)


def _known_ids(profile: str) -> list[tuple[str, str]]:
    """(id, area) of every check of the profile, from the shipped MANIFEST.json."""
    manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
    return [(c["id"], c["area"]) for c in manifest["checks"] if c["profile"] == profile]


def _check_selection(profile: str, ids: tuple[str, ...], matches: tuple[str, ...]) -> None:
    known = [check_id for check_id, _ in _known_ids(profile)]
    problems = unknown_ids(ids, known)
    for text in matches:
        if not any(pattern(text).fullmatch(k) for k in known):
            problems.append(f"no check id matches {text!r}")
    if problems:
        raise click.UsageError("; ".join(problems))


@click.group()
@click.version_option(package_name="memconform")
def main() -> None:
    """Conformance checks for Codex-style agent memory pipelines."""


def _run_options(fn: Any) -> Any:
    options = [
        click.option("--impl", default="ref", show_default=True, help=IMPL_HELP),
        click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
                     default=Path("memconform-report"), show_default=True),
        click.option("--adapter-timeout", type=click.FloatRange(min=0.1), default=120.0,
                     show_default=True, help="Seconds to wait for one protocol response."),
        click.option("--startup-timeout", type=click.FloatRange(min=0.1), default=60.0,
                     show_default=True, help="Seconds one startup may take (its timeout_s; "
                     "the harness waits 30 s more for the answer)."),
        click.option("-q", "--quiet", is_flag=True, help="One character per check."),
        click.option("--no-progress", "no_progress", is_flag=True,
                     help="One plain line per check even on a terminal (the default when the "
                          "output is not a terminal)."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Full tracebacks of failing checks (for debugging the harness)."),
        click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Write every check's bundle here, not only the failures' (these "
                          "always go to REPORT_DIR/bundles)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@main.command()
@_run_options
@click.option("--area", "areas", multiple=True, type=click.Choice(sorted(AREAS)),
              help="Only checks of this area (repeatable).")
@click.option("--id", "ids", multiple=True,
              help="Only this check id, or all cases of it (repeatable).")
@click.option("-k", "--match", "matches", multiple=True,
              help="Only check ids matching this glob (* and ?; brackets are literal) or, "
                   "without a wildcard, containing this text (repeatable).")
@click.option("--expectations", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="TOML file of known failures of this implementation.")
@click.option("--strict-expectations", is_flag=True, help="Stale expectations fail the run.")
@click.option("-n", "workers", type=click.IntRange(min=0), default=0,
              help="Parallel workers (pytest-xdist).")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="local",
              show_default=True, help="local: Codex-style pipelines (adapter protocol); cloud: "
                                      "a control-plane service over HTTP.")
@click.option("--cloud-db", default="sqlite", show_default=True,
              help="Cloud profile with the bundled service: sqlite, postgresql (a throwaway "
                   "server from the machine's PostgreSQL binaries) or a SQLAlchemy URL.")
@click.option("--shard", default=None, metavar="K/N",
              help="Run only shard K of N of the selected checks (merge the N reports with "
                   "`memconform merge`).")
@click.option("--shard-durations", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, metavar="REPORT",
              help="An earlier report.jsonl: its check durations balance the shards.")
def run(impl: str, report_dir: Path, adapter_timeout: float, startup_timeout: float,
        quiet: bool, no_progress: bool, verbose: bool, keep: Path | None,
        areas: tuple[str, ...], ids: tuple[str, ...],
        matches: tuple[str, ...], expectations: Path | None, strict_expectations: bool,
        workers: int, profile: str, cloud_db: str, shard: str | None,
        shard_durations: Path | None) -> None:
    """Run the conformance checks against an implementation."""
    _check_selection(profile, ids, matches)
    if shard is not None:
        from memconform.shard import ShardError, parse

        try:
            parse(shard)
        except ShardError as exc:
            raise click.UsageError(str(exc)) from exc
    expectations = _expectations_for(impl, expectations)
    if expectations is not None:
        try:
            Expectations.load(expectations)
        except ExpectationsError as exc:
            raise click.UsageError(str(exc)) from exc
    args = _pytest_args(impl, areas, ids, matches, expectations, report_dir, workers, False,
                        strict_expectations, adapter_timeout, quiet, verbose, keep, profile,
                        cloud_db, startup_timeout, progress=not no_progress)
    if shard is not None:
        args += ["--shard", shard]
    if shard_durations is not None:
        args += ["--shard-durations", str(shard_durations)]
    sys.exit(_execute(args, report_dir, strict_expectations))


@main.command("diff")
@click.option("--impl", "impls", multiple=True, required=True,
              help="An implementation (give exactly two); see `run --impl`.")
@click.option("--area", "areas", multiple=True, type=click.Choice(sorted(AREAS)),
              help="Only checks of this area (repeatable).")
@click.option("--id", "ids", multiple=True, help="Only this check id (repeatable).")
@click.option("-k", "--match", "matches", multiple=True, help="Only check ids matching this.")
@click.option("--allowed", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="TOML file of differences the rules allow ([[allow]] "
                                 "entries: checks, where, reason).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("memconform-diff"), show_default=True,
              help="Where both runs' reports and states and diff.json / diff.md / diff.html "
                   "go.")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json", "html"]),
              default="table",
              show_default=True)
@click.option("-n", "workers", type=click.IntRange(min=0), default=0,
              help="Parallel workers for each run.")
@click.option("--adapter-timeout", type=click.FloatRange(min=0.1), default=120.0,
              show_default=True)
@click.option("--reuse", is_flag=True, help="Compare the states an earlier diff left in --out "
                                            "instead of running the checks again.")
def diff_command(impls: tuple[str, ...], areas: tuple[str, ...], ids: tuple[str, ...],
                 matches: tuple[str, ...], allowed: Path | None, out: Path, fmt: str,
                 workers: int, adapter_timeout: float, reuse: bool) -> None:
    """Run the same checks on two implementations and report every difference in what they
    left behind: database rows, memory files, model requests, protocol answers."""
    from memconform import capture, differential

    if len(impls) != 2:
        raise click.UsageError(f"give exactly two --impl (got {len(impls)})")
    _check_selection("local", ids, matches)
    try:
        allowances = differential.load_allowed(allowed)
    except differential.DiffError as exc:
        raise click.UsageError(str(exc)) from exc
    captures = []
    for side, impl in zip("ab", impls, strict=True):
        report_dir, states = out / side / "report", out / side / "state"
        if reuse:
            if not states.is_dir():
                raise click.UsageError(f"--reuse: {states} holds no states of an earlier run")
            captures.append(capture.load(states))
            continue
        if states.exists():
            shutil.rmtree(states)
        args = _pytest_args(impl, areas, ids, matches, _expectations_for(impl, None), report_dir,
                            workers, False, False, adapter_timeout, True)
        # the wall clock on both sides: times compare as offsets from each check's clock;
        # one hypothesis seed: generated cases are the same on both sides
        args += ["--capture-state", str(states), "--no-clock-inject", "--hypothesis-seed",
                 str(DIFF_HYPOTHESIS_SEED)]
        console.print(f"[bold]{side}[/bold]: {escape(impl)}")
        code = _pytest(args)
        if code in (2, 3, 4, 5) and not states.is_dir():
            console.print(f"[red]memconform diff: the run of {escape(impl)} produced no "
                          f"states (pytest exit {code})[/red]")
            sys.exit(rep.EXIT_HARNESS)
        captures.append(capture.load(states) if states.is_dir() else {})
    results, only_a, only_b = differential.compare(captures[0], captures[1], allowances)
    data = differential.summary(results, (impls[0], impls[1]), allowances, (only_a, only_b))
    out.mkdir(parents=True, exist_ok=True)
    (out / "diff.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    (out / "diff.md").write_text(differential.markdown(data), encoding="utf-8")
    (out / "diff.html").write_text(differential.html(data), encoding="utf-8")
    if fmt == "json":
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
    elif fmt == "md":
        click.echo(differential.markdown(data))
    elif fmt == "html":
        click.echo(differential.html(data), nl=False)
    else:
        table = Table(title=f"{impls[0]} vs {impls[1]}")
        for column in ("check", "a / b", "where", "a", "b"):
            table.add_column(column, overflow="fold")
        for result in data["results"]:
            for d in result["differences"]:
                if d["allowed"] is None:
                    table.add_row(escape(result["id"]),
                                  f"{result['status_a']} / {result['status_b']}",
                                  escape(d["where"]), escape(str(d["a"])[:120]),
                                  escape(str(d["b"])[:120]))
        console.print(table)
    for entry in data["stale_allowances"]:
        console.print(f"[yellow]stale allowance:[/yellow] {escape(str(entry['checks']))} "
                      f"{escape(str(entry['where']))} (matched no difference)")
    console.print(f"{data['checks']} checks compared: {data['undeclared']} undeclared "
                  f"differences in {data['checks_with_undeclared']} checks, {data['allowed']} "
                  f"allowed; {out / 'diff.md'}")
    sys.exit(1 if data["undeclared"] else 0)


@main.command()
@_run_options
def smoke(impl: str, report_dir: Path, adapter_timeout: float, startup_timeout: float,
          quiet: bool, no_progress: bool, verbose: bool, keep: Path | None) -> None:
    """Run the few checks whose failure means the adapter is wired wrong."""
    _codex_release(impl)
    args = _pytest_args(impl, (), (), (), None, report_dir, 0, True, False, adapter_timeout,
                        quiet, verbose, keep, startup_timeout=startup_timeout,
                        progress=not no_progress)
    sys.exit(_execute(args, report_dir, False))


@main.command("list")
@click.option("--area", "areas", multiple=True, type=click.Choice(sorted(AREAS)))
@click.option("--rule", "rules", multiple=True, help="Only checks that pin this rule id.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the MANIFEST.json format).")
def list_checks(areas: tuple[str, ...], rules: tuple[str, ...], as_json: bool) -> None:
    """List every check (each case on its own line) with its area, level, rules and title."""
    from memconform.listing import collect_checks, manifest

    checks = [c for c in collect_checks() if (not areas or c["area"] in areas)
              and (not rules or set(rules) & set(c["rules"]))]
    if as_json:
        click.echo(json.dumps(manifest(checks), indent=2))
        return
    table = Table()
    for column in ("id", "area", "level", "rules", "title"):
        table.add_column(column, overflow="fold")
    for c in checks:
        table.add_row(*(escape(x) for x in (c["id"], c["area"], c["level"],
                                             ",".join(c["rules"]), c["title"])))
    Console().print(table)


@main.command()
@click.argument("target")
@click.option("--impl", default="ref", show_default=True, help="For the command to run it.")
def explain(target: str, impl: str) -> None:
    """Explain a check id (or case) or a SPEC rule id: the rule's text, the checks and cases
    that pin it, their fixture data and needs, and how to run them."""
    from memconform.explain import ExplainError, explain_text

    try:
        click.echo(explain_text(target, impl))
    except ExplainError as exc:
        raise click.UsageError(str(exc)) from exc


@main.command()
@click.argument("report_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "table", "json"]), default="table",
              show_default=True)
def summary(report_file: Path, fmt: str) -> None:
    """Summarize a report.jsonl."""
    try:
        header, records, footer = rep.load(report_file)
    except rep.ReportError as exc:
        raise click.UsageError(str(exc)) from exc
    if fmt == "md":
        click.echo(rep.markdown(header, records, footer["stale_expectations"]), nl=False)
    elif fmt == "json":
        passed, ran = rep.agreement(records)
        click.echo(json.dumps({"implementation": header["implementation"],
                               "counts": footer["counts"], "by_area": footer["by_area"],
                               "agreement": {"passed": passed, "run": ran},
                               "conformance": {area: {level: {"passed": p, "run": r}
                                                      for level, (p, r) in levels.items()}
                                               for area, levels in
                                               rep.conformance(records).items()}},
                              indent=2))
    else:
        Console().print(_table(records, str(header["implementation"].get("name", ""))))


@main.command("report")
@click.argument("report_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--html", "html", is_flag=True, required=True,
              help="Write the report's page (report.html).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write it [default: report.html beside REPORT_FILE].")
def report_command(report_file: Path, html: bool, out: Path | None) -> None:
    """Write report.html for a report.jsonl (an incomplete report gets a page that says so)."""
    from memconform import htmlreport

    try:
        lines = rep.read_lines(report_file)
    except rep.ReportError as exc:
        raise click.UsageError(str(exc)) from exc
    header, records, footer = rep.load(report_file, allow_incomplete=True)
    target = out or report_file.with_name("report.html")
    try:
        htmlreport.write(target, header, records, footer,
                         incomplete=rep.incomplete_reason(lines))
    except OSError as exc:
        raise click.UsageError(f"cannot write {target}: {exc.strerror}") from exc
    click.echo(str(target))


@main.command("compare")
@click.argument("reports", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json", "html"]),
              default="table", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the output to this file instead of standard output.")
@click.option("--fail-on", "fail_on", type=click.Choice(["regression"]), default=None,
              help="Exit 1 when a check passed in the first report and fails or errors in "
                   "another.")
def compare_command(reports: tuple[Path, ...], fmt: str, out: Path | None,
                    fail_on: str | None) -> None:
    """Compare reports of implementations or runs; the first is the baseline."""
    from memconform import compare

    try:
        data = compare.compare(compare.load(list(reports)))
    except compare.CompareError as exc:
        raise click.UsageError(str(exc)) from exc
    text: str | None = None
    if fmt == "table":
        _compare_tables(data)
    elif fmt == "md":
        text = compare.markdown(data)
    elif fmt == "html":
        text = compare.html(data)
    else:
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if text is not None:
        if out is not None:
            out.write_text(text, encoding="utf-8")
        else:
            click.echo(text, nl=False)
    if fail_on == "regression" and data["regressions"]:
        console.print(f"[red]{data['regressions']} regression(s)[/red]")
        sys.exit(rep.EXIT_NONCONFORMANT)


def _compare_tables(data: dict[str, Any]) -> None:
    out = Console()
    table = Table(title="reports")
    for column in ("report", "passed / run", *rep.STATUSES):
        table.add_column(SHORT.get(column, column), justify="right")
    for r in data["reports"]:
        table.add_row(escape(r["label"]), f"{r['agreement']['passed']}/{r['agreement']['run']}",
                      *(str(r["counts"][s]) for s in rep.STATUSES))
    out.print(table)
    for p in data["pairs"]:
        changes = Table(title=escape(f"{p['base']} → {p['other']}"))
        for column in ("change", "check", "from → to", "sentence"):
            changes.add_column(column, overflow="fold")
        for key in ("regressions", "fixes", "other_changes"):
            for e in p[key]:
                changes.add_row(key.replace("_", " "), escape(e["id"]),
                                f"{e['from']} → {e['to']}", escape(e["sentence"]))
        for key in ("added", "removed"):
            for e in p[key]:
                changes.add_row(key, escape(e["id"]), e["status"], "")
        for e in p["expectation_changes"]:
            changes.add_row("expectation", escape(e["id"]),
                            f"{(e['from'] or {}).get('status', 'none')} → "
                            f"{(e['to'] or {}).get('status', 'none')}", "")
        out.print(changes)
        out.print(f"{len(p['regressions'])} regressions, {len(p['fixes'])} fixes, "
                  f"{len(p['added'])} added, {len(p['removed'])} removed, "
                  f"{len(p['expectation_changes'])} expectation changes, "
                  f"{len(p['other_changes'])} other changes")


@main.command("drift")
@click.argument("reports", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to this file instead of standard output.")
def drift_command(reports: tuple[Path, ...], out: Path | None) -> None:
    """What changed between Codex releases: the reports of each release, oldest first."""
    from memconform import compare, drift

    try:
        text = drift.markdown(compare.load(list(reports)))
    except compare.CompareError as exc:
        raise click.UsageError(str(exc)) from exc
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        console.print(f"drift report written to {escape(str(out))}")


@main.command("matrix")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("memconform-matrix"), show_default=True,
              help="One report folder per release under it.")
@click.option("--release", "chosen", multiple=True,
              help="Only this release, VERSION or VERSION/LAYOUT (repeatable; default: every "
                   "release memconform knows, in each of its layouts).")
@click.option("--drift", "drift_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the drift report over the releases' reports here.")
@click.option("-n", "workers", type=click.IntRange(min=0), default=4, show_default=True)
@click.argument("run_args", nargs=-1, type=click.UNPROCESSED)
def matrix_command(report_dir: Path, chosen: tuple[str, ...], drift_out: Path | None,
                   workers: int, run_args: tuple[str, ...]) -> None:
    """The suite against each Codex release and layout, with its expectations and
    --strict-expectations (extra arguments after -- go to each `memconform run`), then the
    drift report (each layout's releases compared among themselves)."""
    import time

    from memconform import compare, drift
    from memconform.codex import releases

    try:
        targets = [_matrix_target(spec) for spec in chosen] or [
            (version, layout) for version, release in releases.known().items()
            for layout in release.layouts]
    except releases.ReleaseError as exc:
        raise click.UsageError(str(exc)) from exc
    targets.sort(key=lambda t: (t[1], releases.known_order(t[0])))
    table = Table(title="releases")
    for column in ("release", "layout", "exit", "seconds", "report"):
        table.add_column(column)
    codes, reports = [], []
    for version, layout in targets:
        started = time.monotonic()
        folder = report_dir / (version if layout == "v1" else f"{version}-{layout}")
        code = subprocess.run(
            [sys.executable, "-m", "memconform", "run", "--impl", f"codex@{version}/{layout}",
             "-n", str(workers), "-q", "--strict-expectations", "--report-dir", str(folder),
             *run_args], check=False).returncode
        codes.append(code)
        reports.append(folder / "report.jsonl")
        table.add_row(version, layout, str(code), f"{time.monotonic() - started:.0f}",
                      escape(str(folder)))
    console.print(table)
    if drift_out is not None:
        try:
            drift_out.write_text(drift.markdown(compare.load(reports)), encoding="utf-8")
        except compare.CompareError as exc:
            console.print(f"[red]no drift report: {escape(str(exc))}[/red]")
            sys.exit(rep.EXIT_HARNESS)
        console.print(f"drift report written to {escape(str(drift_out))}")
    sys.exit(max(codes, default=0))


def _matrix_target(spec: str) -> tuple[str, str]:
    """`VERSION[/LAYOUT]` -> (version, layout) of a known release (layout v1 unless named)."""
    from memconform.codex import releases

    version, _, layout = spec.partition("/")
    release = releases.get(version)
    layout = layout or "v1"
    if layout not in release.layouts:
        raise releases.ReleaseError(f"Codex {version} has no memory layout {layout!r} (it has "
                                    f"{', '.join(release.layouts)})")
    return release.version, layout


@main.command("merge")
@click.argument("reports", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where the merged report files go.")
def merge_command(reports: tuple[Path, ...], out: Path) -> None:
    """Rebuild one run's reports from the report.jsonl of each of its N shards.

    Refuses a missing, repeated or overlapping shard and shards of different runs; exits
    like `memconform run` would have (0, 1, or 3 when a check errored)."""
    from memconform.shard import ShardError, merge

    try:
        header, records, footer = merge(list(reports), out)
    except ShardError as exc:
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:
        raise click.UsageError(f"--out {out}: {exc.strerror or exc}") from exc
    impl = header["implementation"]
    console.print(_table(records, f"{impl.get('name', impl['spec'])} "
                                  f"{impl.get('version', '')}".strip()))
    shards = ", ".join(f"{s['shard']} {s['duration_s']:.0f} s" for s in footer["shards"])
    passed, ran = rep.agreement(records)
    console.print(f"merged {len(footer['shards'])} shards ({shards}): agreement {passed}/{ran}; "
                  f"report in {escape(str(out))}")
    sys.exit(rep.exit_code(records, footer["stale_expectations"], False))


@main.command("update-expectations")
@click.argument("report_file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("expectations_file", type=click.Path(dir_okay=False, path_type=Path))
def update_expectations(report_file: Path, expectations_file: Path) -> None:
    """Rewrite EXPECTATIONS_FILE for the checks that ran in REPORT_FILE: fixed entries go,
    new failures get an entry (reason to write), comments and reasons stay."""
    try:
        _, records, _ = rep.load(report_file)
        text = ""
        if expectations_file.exists():
            Expectations.load(expectations_file)
            text = expectations_file.read_text(encoding="utf-8")
        table = updated(text, records, str(expectations_file))
    except (rep.ReportError, ExpectationsError) as exc:
        raise click.UsageError(str(exc)) from exc
    expectations_file.write_text(table, encoding="utf-8")
    entries = Expectations.load(expectations_file).entries
    new = sum(1 for e in entries if e.reason == NEW_REASON)
    click.echo(f"{expectations_file}: {len(entries)} entries ({new} new, need a reason)")


@main.command()
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("memconform-selftest"), show_default=True)
@click.option("-n", "workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Mutant runs in parallel.")
@click.option("--mutation", is_flag=True,
              help="Instead of the curated mutants: mutation testing of memref with mutmut "
                   "(needs the `mutation` extra).")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=Path(".memconform-cache"),
              show_default=True, help="--mutation: where mutmut's work is kept between runs.")
@click.option("--budget", "budget_s", type=click.FloatRange(min=1), default=3600.0,
              show_default=True, help="--mutation: seconds before the run stops (what was "
                                      "done is kept for the next run).")
@click.option("--area", "areas", multiple=True, type=click.Choice(LOCAL_AREAS),
              help="--mutation: run only the checks of these areas against each mutant.")
@click.option("--only", multiple=True, metavar="GLOB",
              help="--mutation: mutate only these memref modules (e.g. 'usage.py', "
                   "'tools/*').")
@click.option("--equivalent", "equivalent_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="--mutation: the equivalent-mutant file [default: the "
                                 "shipped conformance/mutation/equivalent.toml].")
@click.option("--ledger", "ledger_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="--mutation: the kill ledger to start from and to write the "
                                 "run's kills to [default: start from the shipped "
                                 "conformance/mutation/ledger.json, write nothing].")
@click.option("--fresh", is_flag=True, help="--mutation: forget the cache and the ledger and "
                                            "try every mutant.")
@click.option("--mutant", "mutants", multiple=True, metavar="ID",
              help="--mutation: try only these mutants (ids as the report names them, e.g. "
                   "memref.phase1.x_run_job__mutmut_24; '*' globs), e.g. after a new check.")
def selftest(report_dir: Path, workers: int, mutation: bool, cache_dir: Path, budget_s: float,
             areas: tuple[str, ...], only: tuple[str, ...], equivalent_file: Path | None,
             ledger_file: Path | None, fresh: bool, mutants: tuple[str, ...]) -> None:
    """Run the suite against every mutant and broken adapter; fail if any survives.

    With --mutation: mutmut mutates the reference and the conformance checks must kill each
    mutant; exit 0 when every survivor is triaged, 1 when one is not (or a triage entry is
    stale), 3 when the budget ran out first."""
    console = Console()
    if mutants and not mutation:
        raise click.UsageError("--mutant needs --mutation")
    if mutation:
        _mutation(report_dir / "mutation", cache_dir, workers, budget_s, areas, only,
                  equivalent_file, ledger_file, fresh, console, mutants)
    from memconform.mutants import MutantError
    from memconform.selftest import run_selftest

    try:
        sys.exit(run_selftest(report_dir, workers, console))
    except MutantError as exc:
        raise click.UsageError(str(exc)) from exc


def _mutation(report_dir: Path, cache_dir: Path, workers: int, budget_s: float,
              areas: tuple[str, ...], only: tuple[str, ...], equivalent_file: Path | None,
              ledger_file: Path | None, fresh: bool, console: Console,
              mutants: tuple[str, ...] = ()) -> None:
    if importlib.util.find_spec("mutmut") is None:
        raise click.UsageError("--mutation needs mutmut: pip install 'memconform[mutation]'")
    from memconform.mutation.command import run_mutation
    from memconform.mutation.ledger import LedgerError
    from memconform.mutation.triage import TriageError
    from memconform.mutation.workspace import Settings, WorkspaceError

    try:
        sys.exit(run_mutation(report_dir=report_dir, cache_dir=cache_dir, workers=workers,
                              budget_s=budget_s, settings=Settings(areas, only),
                              equivalent_file=equivalent_file, fresh=fresh, console=console,
                              ledger_file=ledger_file, names=mutants))
    except (LedgerError, TriageError, WorkspaceError) as exc:
        raise click.UsageError(str(exc)) from exc


@main.command()
@click.option("--quick", is_flag=True, help="Fewer runs and sizes (about two minutes).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("memconform-bench"), show_default=True)
@click.option("--codex/--no-codex", default=True, show_default=True,
              help="Also time the real Codex binary beside the reference (when available).")
def bench(quick: bool, out: Path, codex: bool) -> None:
    """Measure the suite, the reference at scale and beside Codex; write BENCHMARKS.md."""
    from memconform.bench.runner import run as run_benchmarks

    path = run_benchmarks(out, quick, codex)
    click.echo(path.read_text(encoding="utf-8"))
    console.print(f"written: {path} and {path.with_name('benchmarks.json')}")


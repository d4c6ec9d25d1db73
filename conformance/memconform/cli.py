"""The `memconform` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from memconform import report as rep
from memconform import resources
from memconform.expectations import Expectations, ExpectationsError, dump, updated
from memconform.plugin import PROFILES
from memconform.registry import AREAS

console = Console(stderr=True)
CODEX_EXPECTATIONS = "expectations/codex-0.144.6.toml"
IMPL_HELP = "ref (default), python:MODULE:FACTORY, exec:COMMAND, codex[:PATH]"


def _pytest_args(impl: str, areas: tuple[str, ...], ids: tuple[str, ...], keyword: str | None,
                 expectations: Path | None, report_dir: Path, workers: int, smoke: bool,
                 strict: bool, timeout: float, quiet: bool, profile: str = "local",
                 cloud_db: str = "sqlite") -> list[str]:
    args = [sys.executable, "-m", "pytest", "--pyargs", PROFILES[profile], "-p",
            "no:cacheprovider", "--impl", impl, "--report-dir", str(report_dir),
            "--adapter-timeout", str(timeout), "-q" if quiet else "-v", "--profile", profile,
            "--cloud-db", cloud_db]
    for area in areas:
        args += ["--area", area]
    for check_id in ids:
        args += ["--check-id", check_id]
    if keyword:
        args += ["-k", keyword]
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
    table = Table(title=title)
    table.add_column("area")
    for status in rep.STATUSES:
        table.add_column(status, justify="right")
    for area, tally in rep.by_area(records).items():
        table.add_row(area, *(str(tally[s]) for s in rep.STATUSES))
    total = rep.counts(records)
    table.add_row("[bold]all[/bold]", *(f"[bold]{total[s]}[/bold]" for s in rep.STATUSES))
    return table


def _execute(args: list[str], report_dir: Path, strict: bool) -> int:
    previous = report_dir / "report.jsonl"
    if previous.exists():
        previous.unlink()
    code = subprocess.call(args)
    if code == 5:
        console.print("[red]memconform: no checks selected[/red] (check --area / -k)")
        return rep.EXIT_USAGE
    if code == 4:
        return rep.EXIT_USAGE
    try:
        header, records, footer = rep.load(previous)
    except rep.ReportError as exc:
        console.print(f"[red]memconform: {exc}[/red] (pytest exit {code})")
        return rep.EXIT_HARNESS
    impl = header["implementation"]
    console.print(_table(records, f"{impl.get('name', impl['spec'])} "
                                  f"{impl.get('version', '')}".strip()))
    passed, ran = rep.agreement(records)
    console.print(f"agreement: {passed}/{ran} checks run; report in {report_dir}")
    if "handshake_error" in impl:
        console.print(f"[red]handshake failed:[/red] {impl['handshake_error']}")
    for key in footer["stale_expectations"]:
        console.print(f"[yellow]stale expectation:[/yellow] {key} matches no check")
    return rep.exit_code(records, footer["stale_expectations"], strict)


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
        click.option("-q", "--quiet", is_flag=True, help="One character per check."),
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
@click.option("-k", "keyword", default=None, help="pytest -k expression over check names.")
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
def run(impl: str, report_dir: Path, adapter_timeout: float, quiet: bool,
        areas: tuple[str, ...], ids: tuple[str, ...], keyword: str | None,
        expectations: Path | None, strict_expectations: bool, workers: int, profile: str,
        cloud_db: str) -> None:
    """Run the conformance checks against an implementation."""
    if expectations is None and impl.split(":", 1)[0] == "codex":
        expectations = resources.doc(CODEX_EXPECTATIONS)
        console.print(f"using the bundled expectations for Codex: {expectations}")
    if expectations is not None:
        try:
            Expectations.load(expectations)
        except ExpectationsError as exc:
            raise click.UsageError(str(exc)) from exc
    args = _pytest_args(impl, areas, ids, keyword, expectations, report_dir, workers, False,
                        strict_expectations, adapter_timeout, quiet, profile, cloud_db)
    sys.exit(_execute(args, report_dir, strict_expectations))


@main.command()
@_run_options
def smoke(impl: str, report_dir: Path, adapter_timeout: float, quiet: bool) -> None:
    """Run the few checks whose failure means the adapter is wired wrong."""
    args = _pytest_args(impl, (), (), None, None, report_dir, 0, True, False, adapter_timeout,
                        quiet)
    sys.exit(_execute(args, report_dir, False))


@main.command("list")
@click.option("--area", "areas", multiple=True, type=click.Choice(sorted(AREAS)))
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the MANIFEST.json format).")
def list_checks(areas: tuple[str, ...], as_json: bool) -> None:
    """List every check with its area, level, spec rules and title."""
    from memconform.listing import collect_checks, manifest

    checks = [c for c in collect_checks() if not areas or c["area"] in areas]
    if as_json:
        click.echo(json.dumps(manifest(checks), indent=2))
        return
    table = Table()
    for column in ("id", "area", "level", "rules", "title"):
        table.add_column(column, overflow="fold")
    for c in checks:
        table.add_row(c["id"], c["area"], c["level"], ",".join(c["rules"]), c["title"])
    Console().print(table)


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
                               "agreement": {"passed": passed, "run": ran}}, indent=2))
    else:
        Console().print(_table(records, str(header["implementation"].get("name", ""))))


@main.command("update-expectations")
@click.argument("report_file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("expectations_file", type=click.Path(dir_okay=False, path_type=Path))
def update_expectations(report_file: Path, expectations_file: Path) -> None:
    """Rewrite EXPECTATIONS_FILE so it lists exactly the checks that failed in REPORT_FILE."""
    try:
        _, records, _ = rep.load(report_file)
        existing = (Expectations.load(expectations_file) if expectations_file.exists()
                    else Expectations.empty())
    except (rep.ReportError, ExpectationsError) as exc:
        raise click.UsageError(str(exc)) from exc
    table = updated(existing, records)
    expectations_file.write_text(dump(table), encoding="utf-8")
    new = sum(1 for v in table.values() if v["reason"].startswith("TODO"))
    click.echo(f"{expectations_file}: {len(table)} entries ({new} new, need a reason)")


@main.command()
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("memconform-selftest"), show_default=True)
@click.option("-n", "workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Mutant runs in parallel.")
def selftest(report_dir: Path, workers: int) -> None:
    """Run the suite against every mutant and broken adapter; fail if any survives."""
    from memconform.selftest import run_selftest

    sys.exit(run_selftest(report_dir, workers, Console()))


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


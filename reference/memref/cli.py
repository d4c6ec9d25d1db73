"""`memref`: run the reference pipeline on a Codex home."""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import time
from pathlib import Path

import click

from memref.config import ConfigError
from memref.runtime import Runtime
from memref.startup import Session, run_startup
from memref.store import StoreError


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log each pipeline step to stderr.")
def main(verbose: bool) -> None:
    """Reference implementation of the Codex 0.144.6 memories pipeline."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING)


@main.command()
@click.option("--home", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The Codex home (config.toml, state_5.sqlite, sessions/, memories/).")
@click.option("--now-ms", type=int, default=None, help="Current time in Unix ms (default: clock).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for generated ids.")
@click.option("--ephemeral", is_flag=True, help="Behave as an ephemeral session.")
def startup(home: Path, now_ms: int | None, seed: int, ephemeral: bool) -> None:
    """Run one startup of the memories pipeline on HOME."""
    if not home.is_dir():
        raise click.UsageError(f"--home {home}: no such directory")
    rt = Runtime(now_ms=int(time.time() * 1000) if now_ms is None else now_ms, seed=seed)
    session = Session(thread_id=rt.uuid7(), env=dict(os.environ), ephemeral=ephemeral)
    try:
        result = run_startup(home, session, rt)
    except (ConfigError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise click.ClickException(f"{home}: unusable Codex database: {exc}") from exc
    if not result.ran:
        if result.detail is not None:
            raise click.ClickException(result.detail)
        click.echo(f"startup skipped: {result.skipped_reason}")
        return
    click.echo(f"startup ran: {', '.join(result.steps)}")
    if result.skipped_reason:
        click.echo(f"pipeline stopped: {result.skipped_reason}")
    if result.phase1 is not None:
        p1 = result.phase1
        click.echo(f"phase 1: {p1.claimed} claimed, {p1.with_output} with output, "
                   f"{p1.no_output} without, {p1.failed} failed")
    if result.phase2 is not None:
        click.echo(f"phase 2: {result.phase2}")

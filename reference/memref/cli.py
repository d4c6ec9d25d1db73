"""`memref`: run the reference pipeline on a Codex home.

The command line is read with `argparse` (a startup is timed as a whole process, and a
command-line library's import cost more than the rest of the parsing)."""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from memref.config import ConfigError
from memref.runtime import Runtime
from memref.startup import Session, run_startup
from memref.store import StoreError


class Failure(Exception):
    """A startup that could not run: one line on stderr, exit status 1."""


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="memref", description="Reference implementation of the Codex 0.144.6 memories "
        "pipeline.")
    top.add_argument("-v", "--verbose", action="store_true",
                     help="Log each pipeline step to stderr.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    startup = commands.add_parser("startup", help="Run one startup of the memories pipeline "
                                  "on HOME.", description="Run one startup of the memories "
                                  "pipeline on HOME.")
    startup.add_argument("--home", required=True, type=_home, help="The Codex home "
                         "(config.toml, state_5.sqlite, sessions/, memories/).")
    startup.add_argument("--now-ms", type=int, default=None,
                         help="Current time in Unix ms (default: clock).")
    startup.add_argument("--seed", type=int, default=0,
                         help="Seed for generated ids (default: 0).")
    startup.add_argument("--ephemeral", action="store_true",
                         help="Behave as an ephemeral session.")
    return top


def _home(value: str) -> Path:
    home = Path(value)
    if not home.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: no such directory")
    return home


def main(argv: Sequence[str] | None = None) -> None:
    """Parse `argv` (default: the process's arguments), run the command and exit: 0 when it
    ran, 1 when it failed (one line on stderr), 2 for a wrong command line."""
    top = parser()
    args = top.parse_args(argv)
    logging.basicConfig(stream=sys.stderr,
                        level=logging.INFO if args.verbose else logging.WARNING)
    try:
        startup(args.home, args.now_ms, args.seed, args.ephemeral)
    except Failure as exc:
        top.exit(1, f"Error: {exc}\n")
    top.exit(0)


def startup(home: Path, now_ms: int | None, seed: int, ephemeral: bool) -> None:
    """One startup of the memories pipeline on `home`; what it did goes to stdout."""
    rt = Runtime(now_ms=int(time.time() * 1000) if now_ms is None else now_ms, seed=seed)
    session = Session(thread_id=rt.uuid7(), env=dict(os.environ), ephemeral=ephemeral)
    try:
        result = run_startup(home, session, rt)
    except (ConfigError, StoreError) as exc:
        raise Failure(str(exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise Failure(f"{home}: unusable Codex database: {exc}") from exc
    if not result.ran:
        if result.detail is not None:
            raise Failure(result.detail)
        print(f"startup skipped: {result.skipped_reason}")
        return
    print(f"startup ran: {', '.join(result.steps)}")
    if result.skipped_reason:
        print(f"pipeline stopped: {result.skipped_reason}")
    if result.phase1 is not None:
        p1 = result.phase1
        print(f"phase 1: {p1.claimed} claimed, {p1.with_output} with output, "
              f"{p1.no_output} without, {p1.failed} failed")
    if result.phase2 is not None:
        print(f"phase 2: {result.phase2}")

"""One mutmut run in the work directory, within a time budget (through `launch`, which makes
its timeouts safe).

mutmut's own output (a spinner per step) goes to `mutmut.log` in the work directory; the
caller gets a progress callback from the verdicts mutmut has saved. When the budget is spent
mutmut is asked to stop (SIGINT, which it handles by keeping the verdicts it has) and killed
if it does not; the mutants it did not reach stay unchecked and are tried first next time.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

STOP_GRACE_S = 120.0
POLL_S = 1.0
# Mutants run in a local time zone that is not UTC and not a whole hour away (UTC+05:45, a
# POSIX TZ string, so no tzdata is needed): a mutant that formats a time in local time instead
# of UTC then changes what the checks see.
MUTANT_TZ = "<+0545>-05:45"


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int | None
    seconds: float
    budget_spent: bool
    log: Path


def mutmut_command(workers: int, names: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "memconform.mutation.launch", "run", "--max-children",
            str(workers), *names]


def run_mutmut(work: Path, *, workers: int, budget_s: float,
               progress: Callable[[], None] | None = None, progress_every_s: float = 30.0,
               names: tuple[str, ...] = ()) -> RunOutcome:
    """Run `mutmut run` in `work` (optionally only the given mutant names)."""
    log = work / "mutmut.log"
    started = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TZ": MUTANT_TZ}
    with log.open("w", encoding="utf-8") as handle:
        proc = subprocess.Popen(
            mutmut_command(workers, names), cwd=work, stdout=handle, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        spent = False
        last = started
        previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if now - started > budget_s:
                    spent = True
                    _stop(proc)
                    break
                if progress is not None and now - last >= progress_every_s:
                    last = now
                    progress()
                time.sleep(POLL_S)
        except BaseException:
            _stop(proc)
            raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return RunOutcome(proc.returncode, time.monotonic() - started, spent, log)


def _interrupt(signum: int, frame: object) -> None:
    """SIGINT or SIGTERM (also when started in the background, where SIGINT is ignored):
    stop mutmut so that it keeps its verdicts, then end."""
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT to mutmut's process group, then SIGKILL if it is still there after the grace."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def replay_works(work: Path) -> str | None:
    """Whether mutmut's way of re-running checks by node id works here: one recorded check
    run that way, with no mutant active, must pass. (mutmut counts any crash of a mutant's
    run, a check id pytest cannot find included, as a kill.) None when it works, else why."""
    stats = work / "mutants" / "mutmut-stats.json"
    try:
        tests = sorted(json.loads(stats.read_text(encoding="utf-8"))["duration_by_test"])
    except (OSError, ValueError, KeyError):
        return None  # no check reached any mutant: nothing was re-run by id
    if not tests:
        return None
    config = (work / "pyproject.toml").read_text(encoding="utf-8")
    extra = json.loads(config.split("pytest_add_cli_args = ", 1)[1].split("\n", 1)[0])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--rootdir=.", "-q", "-x", tests[0], *extra],
        cwd=work / "mutants", capture_output=True, text=True, timeout=600,
        stdin=subprocess.DEVNULL, env={**os.environ, "MUTANT_UNDER_TEST": "", "TZ": MUTANT_TZ})
    if done.returncode == 0:
        return None
    tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
    return (f"re-running check {tests[0]} by its id exited {done.returncode} without a "
            f"mutant ({' / '.join(tail)}); mutmut's kills cannot be trusted")

"""One mutmut run in the work directory, within a time budget.

mutmut's own output (a spinner per step) goes to `mutmut.log` in the work directory; the
caller gets a progress callback from the verdicts mutmut has saved. When the budget is spent
mutmut is asked to stop (SIGINT, which it handles by keeping the verdicts it has) and killed
if it does not; the mutants it did not reach stay unchecked and are tried first next time.
"""

from __future__ import annotations

import contextlib
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


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int | None
    seconds: float
    budget_spent: bool
    log: Path


def run_mutmut(work: Path, *, workers: int, budget_s: float,
               progress: Callable[[], None] | None = None, progress_every_s: float = 30.0,
               names: tuple[str, ...] = ()) -> RunOutcome:
    """Run `mutmut run` in `work` (optionally only the given mutant names)."""
    log = work / "mutmut.log"
    started = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with log.open("w", encoding="utf-8") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(workers), *names],
            cwd=work, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env=env)
        spent = False
        last = started
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
    return RunOutcome(proc.returncode, time.monotonic() - started, spent, log)


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

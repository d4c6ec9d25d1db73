"""mutmut's command line with its wall-clock timeouts made safe.

mutmut 3 sends SIGXCPU to a mutant's run by pid when its deadline passes, also when that run
ended long before; the pid may by then name another process — another mutant's run, a git
process of a check, any process on the machine (pids wrap at 32,768 here) — which then dies and
makes a mutant look killed or timed out. Here a deadline fires only while the pid still names
the process it was set for (same start time in /proc).

Run as `python -m memconform.mutation.launch run …` (the arguments of `mutmut`).
"""

from __future__ import annotations

import contextlib
import heapq
import os
import signal
import threading
import time

_heap: list[tuple[float, int, str | None]] = []
_lock = threading.Condition()
_started = False


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


def register_timeout(pid: int, timeout_s: float) -> None:
    global _started
    with _lock:
        if not _started:
            _started = True
            threading.Thread(target=_watch, name="memconform-mutmut-timeouts",
                             daemon=True).start()
        heapq.heappush(_heap, (time.time() + timeout_s, pid, start_time(pid)))
        _lock.notify()


def _watch() -> None:
    with _lock:
        while True:
            while not _heap:
                _lock.wait()
            now = time.time()
            while _heap and _heap[0][0] <= now:
                _, pid, started = heapq.heappop(_heap)
                if started is not None and start_time(pid) == started:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGXCPU)
            if _heap:
                _lock.wait(timeout=max(0.0, _heap[0][0] - now))


def main() -> None:
    # a run started in the background inherits an ignored SIGINT, which is how the runner asks
    # mutmut to stop and keep its verdicts: take it back
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # imported here: mutmut reads its configuration from the working directory on import
    import mutmut.workers.isolation as isolation
    import mutmut.workers.timeout as timeout

    timeout.register_timeout = register_timeout
    isolation.register_timeout = register_timeout  # type: ignore[attr-defined]  # by name
    from mutmut.__main__ import cli

    cli()


if __name__ == "__main__":
    main()

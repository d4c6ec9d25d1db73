"""Progress of a run on a terminal (`--progress live`): checks done of the total, counts per
area and status, elapsed and estimated time left, the check running now; a failure is printed
above the display as it happens. Redrawn from pytest's hooks on the controller (never from a
thread, so nothing is written while pytest captures a check's output)."""

from __future__ import annotations

import time
from collections import Counter
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

SHOWN = ("pass", "fail", "error", "xfail", "xpass", "unsupported", "not-implemented", "skip")
STYLE = {"pass": "green", "fail": "red", "error": "magenta", "xpass": "yellow"}


class LiveProgress:
    def __init__(self, stream: IO[str]) -> None:
        self.console = Console(file=stream, force_terminal=True, highlight=False)
        self.started = time.monotonic()
        self.total: int | None = None
        self.done = 0
        self.by_area: dict[str, Counter[str]] = {}
        self.current = ""
        self.live = Live(console=self.console, auto_refresh=False, transient=True,
                         redirect_stdout=False, redirect_stderr=False)

    def start(self) -> None:
        self.live.start()
        self.refresh()

    def stop(self) -> None:
        self.live.stop()

    def running(self, check_id: str) -> None:
        self.current = check_id
        self.refresh()

    def finished(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.by_area.setdefault(record["area"], Counter())[record["status"]] += 1
        if record["status"] in ("fail", "error", "xpass"):
            self.console.print(
                f"[{STYLE[record['status']]}]{record['status'].upper()}[/] "
                f"{escape(record['id'])}\n    {escape(record.get('sentence') or '')}\n"
                f"    repro: {escape(record.get('repro') or '')}")
        self.refresh()

    def _eta(self, elapsed: float) -> str:
        if not self.done or not self.total:
            return "?"
        left = elapsed / self.done * max(self.total - self.done, 0)
        return f"{left:.0f} s"

    def render(self) -> Group:
        elapsed = time.monotonic() - self.started
        head = Text(f"{self.done}/{self.total or '?'} checks, {elapsed:.0f} s elapsed, "
                    f"about {self._eta(elapsed)} left")
        table = Table(box=None, pad_edge=False)
        table.add_column("area")
        for status in SHOWN:
            table.add_column(status, justify="right", style=STYLE.get(status))
        for area, tally in sorted(self.by_area.items()):
            table.add_row(area, *(str(tally[s]) for s in SHOWN))
        now = Text(f"running {self.current}" if self.current else "", style="dim")
        return Group(head, table, now)

    def refresh(self) -> None:
        self.live.update(self.render(), refresh=True)

"""Concurrent startups on one home, one per adapter connection (not collected)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memconform.adapters import Adapter
from memconform.clock import HarnessClock
from memconform.fixtures import startup_args
from memconform.home import CodexHome


def race(home: CodexHome, clock: HarnessClock, adapters: list[Adapter], seed: int) -> None:
    """Start one session per adapter on `home` at once and wait for all of them; session
    `i` gets seed `seed + i`."""
    def one(indexed: tuple[int, Adapter]) -> None:
        index, adapter = indexed
        args = startup_args(home, clock, seed=seed + index)
        adapter.call("startup", args, timeout_s=args["timeout_s"] + 30)

    with ThreadPoolExecutor(max_workers=len(adapters)) as pool:
        list(pool.map(one, enumerate(adapters)))

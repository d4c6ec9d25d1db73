"""A pytest plugin for test_interrupt: before the third check, SIGINT arrives while a
garbage-collector callback runs, where Python drops the KeyboardInterrupt it raises."""

from __future__ import annotations

import gc
import os
import signal
from typing import Any

import pytest

_seen = 0


def _callback(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        gc.callbacks.remove(_callback)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here, inside the callback
            pass


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _seen
    _seen += 1
    if _seen == 3:
        gc.callbacks.append(_callback)
        gc.collect()

"""The harness clock: one `now` per check, sent to the implementation in every request."""

from __future__ import annotations

import time

# 2026-06-01T12:00:00Z: a fixed instant for implementations that honour `now_ms`.
FIXED_EPOCH_MS = 1_780_315_200_000


class HarnessClock:
    """Fixed (and advanceable) for `clock.inject` implementations, the wall clock otherwise."""

    def __init__(self, injected: bool) -> None:
        self.injected = injected
        self._now_ms = FIXED_EPOCH_MS if injected else int(time.time() * 1000)

    @property
    def now_ms(self) -> int:
        return self._now_ms

    @property
    def now(self) -> int:
        return self._now_ms // 1000

    def request_now(self) -> int | None:
        """The `now_ms` to put in a request (null tells the implementation to use its clock)."""
        return self._now_ms if self.injected else None

    def advance(self, seconds: float) -> None:
        if not self.injected:
            raise RuntimeError("the wall clock cannot be advanced; the check must require "
                               "the clock.inject capability")
        self._now_ms += int(seconds * 1000)

"""The harness's own time-dependent code, under a frozen clock (freezegun)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from memconform.clock import FIXED_EPOCH_MS, HarnessClock
from memconform.report import Reporter

FROZEN = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)


@freeze_time(FROZEN)
def test_wall_clock_mode_follows_the_machine_and_is_not_sent() -> None:
    clock = HarnessClock(injected=False)
    assert clock.now_ms == int(FROZEN.timestamp() * 1000)
    assert clock.request_now() is None, "a wall-clock implementation gets null, not a time"
    with pytest.raises(RuntimeError, match="cannot be advanced"):
        clock.advance(60)


@freeze_time(FROZEN)
def test_injected_mode_ignores_the_machine_and_advances() -> None:
    clock = HarnessClock(injected=True)
    assert clock.now_ms == FIXED_EPOCH_MS
    clock.advance(90.5)
    assert clock.request_now() == FIXED_EPOCH_MS + 90_500
    assert clock.now == (FIXED_EPOCH_MS + 90_500) // 1000


def test_report_times_come_from_the_clock(tmp_path: Path) -> None:
    with freeze_time(FROZEN) as frozen:
        reporter = Reporter(tmp_path, {"impl": "ref"})
        frozen.tick(12.5)
        assert reporter.header()["started_at"] == FROZEN.timestamp()
        assert reporter.footer()["duration_s"] == 12.5

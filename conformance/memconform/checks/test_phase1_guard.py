"""GUARD: the plan-usage check before Phase 1 (ChatGPT logins only; fails open)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.checks.stage1 import VALID_OUTPUT, configure, job, requests_for
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check


def windows(primary: float | None, secondary: float | None, **extra: Any) -> dict[str, Any]:
    limits: dict[str, Any] = {**extra}
    if primary is not None:
        limits["primary_window"] = {"used_percent": primary, "limit_window_seconds": 18000}
    if secondary is not None:
        limits["secondary_window"] = {"used_percent": secondary,
                                      "limit_window_seconds": 604800}
    return {"plan_type": "plus", "rate_limit": limits}


CASES: dict[str, tuple[int, Any, int, bool]] = {
    # name: (min_rate_limit_remaining_percent, usage body, HTTP status, pipeline runs)
    "primary-too-used": (25, windows(90, 10), 200, False),
    "secondary-too-used": (25, windows(10, 75.1), 200, False),
    "both-within": (25, windows(74.9, 74.9), 200, True),
    "exactly-at-threshold": (25, windows(75, 75), 200, True),
    "threshold-ten-allows-89.9": (10, windows(89.9, 50), 200, True),
    "threshold-eleven-refuses-89.9": (11, windows(89.9, 50), 200, False),
    "limit-reached-flag": (0, windows(1, 1, limit_reached=True), 200, False),
    "missing-windows-pass": (25, windows(None, None), 200, True),
    "threshold-zero-allows-full": (0, windows(100, 100), 200, True),
    "usage-endpoint-error-fails-open": (100, windows(99, 99), 500, True),
    "usage-not-json-fails-open": (100, "<html>oops</html>", 200, True),
}


def run_once(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             memories: dict[str, Any], top: dict[str, Any] | None = None) -> bool:
    """One startup with one eligible thread; whether Phase 1 extracted it."""
    configure(home, memories, top)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    ran = bool(requests_for(model, thread.id))
    assert ran == (job(home, thread.id) is not None), "job rows disagree with requests"
    return ran


@check("p1.guard.api-key", title="with an API-key provider the plan-usage check is skipped "
       "and the pipeline runs", rules="GUARD-01", level="MUST", area="phase1")
def test_api_key(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    model.set_usage(windows(100, 100))
    assert run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": 100},
                    top={"chatgpt_base_url": model.backend_url})
    assert model.of_kind("usage") == [], "plan usage was fetched for an API-key provider"


@check("p1.guard.chatgpt", title="a ChatGPT login skips the pipeline when plan usage is above "
       "the threshold, and runs when it cannot be learned", rules=("GUARD-01", "GUARD-02"),
       level="SHOULD", area="phase1", needs=("auth.chatgpt",))
@pytest.mark.parametrize("case", sorted(CASES))
def test_chatgpt(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 case: str) -> None:
    threshold, body, status, runs = CASES[case]
    home.write_chatgpt_login()
    model.set_usage(body, status=status)
    ran = run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": threshold},
                   top={"chatgpt_base_url": model.backend_url})
    assert len(model.of_kind("usage")) == 1, "plan usage was not fetched exactly once"
    assert ran is runs

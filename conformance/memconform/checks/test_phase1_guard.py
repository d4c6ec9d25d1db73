"""GUARD: the plan-usage check before Phase 1 (ChatGPT logins only; fails open)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memconform.checks.consolidation import GLOBAL, agent_finishes, consolidations, global_job
from memconform.checks.stage1 import (
    VALID_OUTPUT,
    configure,
    extracted_once,
    job,
    output,
    requests_for,
)
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.verdicts import fail, produced

DAY_S = 86_400
STALE_ID = "stale-unselected-output"


def windows(primary: float | None, secondary: float | None, **extra: Any) -> dict[str, Any]:
    """A plan-usage answer in the backend's shape: `allowed` and `limit_reached` are always
    present (a reached limit is not allowed) and every window carries its reset fields, so a
    strict reader parses it."""
    reached = bool(extra.get("limit_reached", False))
    limits: dict[str, Any] = {"allowed": not reached, "limit_reached": reached, **extra}
    if primary is not None:
        limits["primary_window"] = {"used_percent": primary, "limit_window_seconds": 18000,
                                    "reset_after_seconds": 3600, "reset_at": 1_780_318_800}
    if secondary is not None:
        limits["secondary_window"] = {"used_percent": secondary,
                                      "limit_window_seconds": 604800,
                                      "reset_after_seconds": 86400, "reset_at": 1_780_401_600}
    return {"plan_type": "plus", "rate_limit": limits}


CASES: dict[str, tuple[int, Any, int, bool, str]] = {
    # name: (min_rate_limit_remaining_percent, usage body, HTTP status, pipeline runs, why)
    "primary-too-used": (25, windows(90, 10), 200, False,
                         "the primary window used 90 % where at most 75 % is allowed"),
    "secondary-too-used": (25, windows(10, 75.1), 200, False,
                           "the secondary window used 75.1 % where at most 75 % is allowed"),
    "both-within": (25, windows(74.9, 74.9), 200, True,
                    "both windows used 74.9 % where up to 75 % is allowed"),
    "exactly-at-threshold": (25, windows(75, 75), 200, True,
                             "both windows used exactly the 75 % allowed"),
    "threshold-ten-allows-89.9": (10, windows(89.9, 50), 200, True,
                                  "89.9 % used is within the 90 % allowed"),
    "threshold-eleven-refuses-89.9": (11, windows(89.9, 50), 200, False,
                                      "89.9 % used is over the 89 % allowed"),
    "limit-reached-flag": (0, windows(1, 1, limit_reached=True), 200, False,
                           "the plan reports its limit reached"),
    "missing-windows-pass": (25, windows(None, None), 200, True,
                             "a plan without usage windows passes"),
    "no-rate-limit-passes": (25, {"plan_type": "plus"}, 200, True,
                             "a usage answer without a rate limit passes"),
    "reached-type-refuses": (0, {**windows(10, 10), "rate_limit_reached_type":
                                 "rate_limit_reached"}, 200, False,
                             "the usage answer names the rate limit reached "
                             "(rate_limit_reached_type)"),
    "threshold-zero-allows-full": (0, windows(100, 100), 200, True,
                                   "a threshold of 0 allows 100 % used"),
    "threshold-hundred-allows-unused": (100, windows(0, 0), 200, True,
                                        "a threshold of 100 allows 0 % used"),
    "threshold-hundred-refuses-one": (100, windows(1, 0), 200, False,
                                      "a threshold of 100 allows nothing used, and the primary "
                                      "window used 1 %"),
    "usage-endpoint-error-fails-open": (100, windows(99, 99), 500, True,
                                        "the usage endpoint answered HTTP 500 (fail open)"),
    "usage-not-json-fails-open": (100, "<html>oops</html>", 200, True,
                                  "the usage answer was not JSON (fail open)"),
}


def run_once(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             memories: dict[str, Any], top: dict[str, Any] | None = None) -> bool:
    """One startup with one eligible thread; whether Phase 1 extracted it."""
    configure(home, memories, top)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    ran = bool(requests_for(model, thread.id))
    if ran:
        assert job(home, thread.id) is not None, \
            "the thread was extracted without a stage-1 job row"
    else:
        assert job(home, thread.id) is None, \
            "a stage-1 job row was written for a thread that was not extracted"
    return ran


@check("p1.guard.api-key", title="with an API-key provider the plan-usage check is skipped "
       "and the pipeline runs", rules="GUARD-01", level="MUST", area="phase1")
def test_api_key(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    model.set_usage(windows(100, 100))
    ran = run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": 100},
                   top={"chatgpt_base_url": model.backend_url})
    assert len(model.of_kind("usage")) == 0, "plan usage was fetched for an API-key provider"
    assert ran, ("the pipeline did not run with an API-key provider: the eligible thread was "
                 "not extracted")


@check("p1.guard.chatgpt", title="a ChatGPT login skips the pipeline when plan usage is above "
       "the threshold, and runs when it cannot be learned", rules=("GUARD-01", "GUARD-02"),
       level="SHOULD", area="phase1", needs=("auth.chatgpt",))
@pytest.mark.parametrize("case", sorted(CASES))
def test_chatgpt(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 case: str) -> None:
    threshold, body, status, runs, why = CASES[case]
    home.write_chatgpt_login()
    model.set_usage(body, status=status)
    ran = run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": threshold},
                   top={"chatgpt_base_url": model.backend_url})
    fetched = len(model.of_kind("usage"))
    assert fetched == 1, ("plan usage was not fetched for a ChatGPT login" if fetched == 0
                          else "plan usage was fetched more than once in one startup")
    assert ran is runs, (f"the pipeline did not run although {why}" if runs
                         else f"the pipeline ran although {why}")


SKIP_STATE: dict[str, tuple[Any, bool, str]] = {
    # name: (usage body, pipeline runs, why)
    "over-threshold-skips": (windows(90, 10), False,
                             "the primary window used 90 % where at most 75 % is allowed"),
    "within-threshold-runs": (windows(10, 10), True,
                              "both windows used 10 % where up to 75 % is allowed"),
}


@check("p1.guard.skip-state", title="a guard skip comes after the root, the extension seed "
       "and pruning, and skips Phase 1 and Phase 2",
       rules=("GUARD-01", "GUARD-02", "START-03", "RET-01"),
       level="SHOULD", area="phase1", needs=("auth.chatgpt",))
@pytest.mark.parametrize("case", sorted(SKIP_STATE))
def test_skip_state(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    case: str) -> None:
    body, runs, why = SKIP_STATE[case]
    home.write_chatgpt_login()
    model.set_usage(body)
    configure(home, {"min_rate_limit_remaining_percent": 25},
              top={"chatgpt_base_url": model.backend_url})
    # the consolidation job is free to claim, so a Phase 2 that runs leaves a row behind
    home.execute(home.memories_db, "DELETE FROM jobs WHERE kind = ?", (GLOBAL,))
    home.add_stage1_output(STALE_ID, raw_memory="- a memory nobody used for sixty days",
                           rollout_summary="Stale.",
                           source_updated_at=home.now_ms // 1000 - 60 * DAY_S)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT))
    agent_finishes(model)
    run_startup(home)
    fetched = len(model.of_kind("usage"))
    assert fetched == 1, ("plan usage was not fetched for a ChatGPT login" if fetched == 0
                          else "plan usage was fetched more than once in one startup")
    # START-03 / GUARD-01: the root, the seed and pruning come before the plan-usage check
    assert home.memory_root.is_dir(), f"the memory root was not created ({why})"
    seed = produced(home.memory_root / "extensions" / "ad_hoc" / "instructions.md",
                    f"memories/extensions/ad_hoc/instructions.md ({why})")
    assert seed.strip(), f"the seeded extension instructions are empty ({why})"
    assert output(home, STALE_ID) is None, \
        f"the 60-day-old unselected output was not pruned before the plan-usage check ({why})"
    if runs:
        extracted_once(model, thread.id, f"the eligible thread ({why})")
        assert job(home, thread.id) is not None, \
            "the thread was extracted without a stage-1 job row"
        row = global_job(home)
        if row is None or consolidations(model) == 0:
            fail(f"Phase 2 did not run although {why}: no consolidation agent was started "
                 "or no memory_consolidate_global row was written",
                 expected="a consolidation run",
                 actual=f"{consolidations(model)} agent conversations, "
                        f"row {'present' if row else 'absent'}")
        return
    assert requests_for(model, thread.id) == [], f"Phase 1 extracted the thread although {why}"
    assert job(home, thread.id) is None, \
        f"a stage-1 job row was written although {why}"
    assert consolidations(model) == 0, f"a consolidation agent was started although {why}"
    assert global_job(home) is None, \
        f"Phase 2 claimed the consolidation job (a memory_consolidate_global row) although {why}"
    assert not (home.memory_root / "raw_memories.md").exists(), \
        f"Phase 2 wrote raw_memories.md although {why}"


@check("p1.guard.usage-request-signed", title="the plan-usage request carries the ChatGPT "
       "login's access token as a Bearer token and its account id", rules="GUARD-01",
       level="SHOULD", area="phase1", needs=("auth.chatgpt",))
def test_usage_request_signed(home: CodexHome, model: MockModel,
                              run_startup: StartupRunner) -> None:
    auth = home.write_chatgpt_login(account_id="acct-signed")
    tokens = json.loads(auth.read_text(encoding="utf-8"))["tokens"]
    model.set_usage(windows(10, 10))
    run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": 25},
             top={"chatgpt_base_url": model.backend_url})
    requests = model.of_kind("usage")
    if not requests:
        fail("plan usage was not fetched for a ChatGPT login")
    headers = {k.lower(): v for k, v in requests[0].headers.items()}
    assert headers.get("authorization") == f"Bearer {tokens['access_token']}", \
        "the plan-usage request does not carry the login's access token as " \
        "`Authorization: Bearer <access_token>`"
    assert headers.get("chatgpt-account-id") == "acct-signed", \
        "the plan-usage request does not carry the login's account id in chatgpt-account-id"


def _no_usable_login(case: str, login: dict[str, Any]) -> Any:
    """`auth.json` as a ChatGPT login leaves it, changed so that it holds no access token to
    sign a plan-usage request with."""
    if case == "empty-object":
        return {}
    if case == "tokens-null":
        return {**login, "tokens": None}
    if case == "json-array":
        return [login]
    tokens = dict(login["tokens"])
    if case == "no-access-token":
        del tokens["access_token"]
    else:  # access-token-a-number
        tokens["access_token"] = 5
    return {**login, "tokens": tokens}


@check("p1.guard.no-usable-login", title="an auth.json with no access token asks for no plan "
       "usage and the pipeline runs", rules="GUARD-01", level="SHOULD", area="phase1",
       needs=("auth.chatgpt",))
@pytest.mark.parametrize("case", ["empty-object", "tokens-null", "json-array",
                                  "no-access-token", "access-token-a-number"])
def test_no_usable_login(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         case: str) -> None:
    auth = home.write_chatgpt_login()
    login = json.loads(auth.read_text(encoding="utf-8"))
    auth.write_text(json.dumps(_no_usable_login(case, login)), encoding="utf-8")
    model.set_usage(windows(100, 100))
    ran = run_once(home, model, run_startup, {"min_rate_limit_remaining_percent": 25},
                   top={"chatgpt_base_url": model.backend_url})
    asked = model.of_kind("usage")
    if asked:
        fail(f"with an auth.json that holds no access token ({case}) the plan usage was asked "
             "for: there is no login to sign the request with",
             expected="no plan-usage request",
             actual=f"{len(asked)} request(s), authorization "
                    f"{'present' if 'authorization' in asked[0].headers else 'absent'}")
    assert ran, f"with an auth.json that holds no access token ({case}) the eligible thread " \
        "was not extracted (no ChatGPT login: the plan-usage check does not apply)"

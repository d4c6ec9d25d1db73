"""P1-CAND: which threads a startup extracts, end to end (fixtures/phase1/selection.json)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.checks.stage1 import (
    MINUTE_MS,
    VALID_OUTPUT,
    ago_at_ms,
    configure,
    extracted_once,
    job,
    requests_for,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome, Thread
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.resources import fixture_json

CASES = fixture_json("phase1", "selection.json")["cases"]
THREAD_KEYS = ("source", "archived", "preview", "memory_mode", "history_mode", "thread_id")
CONTROL = "the control thread (plainly eligible, in the same home)"
CONTROL_AGE_MS = 150 * MINUTE_MS


def seed(home: CodexHome, spec: dict[str, Any]) -> Thread:
    ago_ms = spec.get("age_min", 120) * MINUTE_MS
    if "ms_of_second" in spec:
        ago_ms = ago_at_ms(home.now_ms, ago_ms, spec["ms_of_second"])
    thread = home.add_thread(updated_ago_ms=ago_ms,
                             user_text=f"Thread {spec['label']}: remember the teal colour.",
                             **{k: spec[k] for k in THREAD_KEYS if k in spec})
    seconds = thread.updated_at_ms // 1000
    if "extracted_at" in spec:
        home.add_stage1_output(thread.id, raw_memory="old", rollout_summary="old",
                               source_updated_at=seconds + spec["extracted_at"]["offset_s"])
    if "success_watermark" in spec:
        mark = seconds + spec["success_watermark"]["offset_s"]
        home.add_job("memory_stage1", thread.id, status="done", worker_id="w",
                     ownership_token="t", input_watermark=mark, last_success_watermark=mark)
    return thread


@check("p1.cand.select", title="a startup extracts exactly the eligible, stale threads, "
       "newest first, up to the per-startup limit", rules=("P1-CAND-01", "P1-CAND-02",
                                                           "P1-CAND-03", "P1-CAND-04"),
       level="MUST", area="phase1")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_select(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                case: dict[str, Any]) -> None:
    configure(home, case.get("config"))
    threads = {spec["label"]: seed(home, spec) for spec in case["threads"]}
    # A case that extracts nothing is proven against a plainly eligible control thread that
    # the same startup must extract (every such case keeps the default window and limit), or,
    # where its config leaves nothing eligible, against a second startup with `then_config`.
    control = None if case["extracted"] or "then_config" in case else \
        home.add_thread(updated_ago_ms=CONTROL_AGE_MS)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    extracted = [label for label, t in threads.items() if requests_for(model, t.id)]
    assert sorted(extracted) == sorted(case["extracted"]), \
        "the startup did not extract exactly the eligible threads of the case (labels)"
    for label in case["extracted"]:
        extracted_once(model, threads[label].id, f"thread {label}")
        claimed = job(home, threads[label].id)
        assert claimed is not None, f"the extracted thread {label} has no stage-1 job row"
        assert claimed["status"] == "done", f"the job of the extracted thread {label} is not done"
    for spec in case["threads"]:
        if spec["label"] not in case["extracted"] and "success_watermark" not in spec:
            assert job(home, threads[spec["label"]].id) is None, \
                f"a job row was written for thread {spec['label']}, which was not claimed"
    if control is not None:
        extracted_once(model, control.id, CONTROL)
    if "then_config" in case:
        configure(home, case["then_config"])
        run_startup(home)
        for label in case["then_extracted"]:
            extracted_once(model, threads[label].id, f"thread {label} (in a second startup "
                           f"with {case['then_config']}, the case's control)")


@check("p1.cand.scan-limit", title="at most 5,000 candidates are scanned, and up-to-date "
       "threads use scan slots", rules="P1-CAND-03", level="MUST", area="phase1")
@pytest.mark.parametrize(("fresh", "extracted"), [(4999, True), (5000, False)],
                         ids=["4999-up-to-date", "5000-up-to-date"])
def test_scan_limit(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    fresh: int, extracted: bool) -> None:
    configure(home)
    stale = home.add_thread(updated_ago_ms=300 * MINUTE_MS)
    up_to_date = home.add_threads(fresh, updated_ago_ms=120 * MINUTE_MS)
    home.add_stage1_outputs([
        {"thread_id": t.id, "raw_memory": "r", "rollout_summary": "s",
         "source_updated_at": t.updated_at_ms // 1000}
        for t in up_to_date])
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert bool(requests_for(model, stale.id)) is extracted, (
        f"the stale thread behind {fresh:,} up-to-date ones was not extracted" if extracted
        else f"the stale thread behind {fresh:,} up-to-date ones was extracted: the scan went "
        "past 5,000 candidates")
    assert len(model.of_kind("stage1")) == int(extracted), "an up-to-date thread was extracted"
    if not extracted:
        # Control: with one up-to-date thread gone the stale one is within the scan, and the
        # next startup on the same home must extract it.
        home.execute(home.state_db, "DELETE FROM threads WHERE id = ?", (up_to_date[0].id,))
        up_to_date[0].rollout_path.unlink()
        run_startup(home)
        extracted_once(model, stale.id, "the stale thread behind 4,999 up-to-date ones "
                       "(control: a second startup after one up-to-date thread was removed)")


HOUR_MS = 60 * MINUTE_MS
TEN_DAYS_MS = 10 * 24 * HOUR_MS
# name: (thread age when the home is built, clock advance in seconds before the startup,
#        extracted, what is wrong when the check fails). With an advance the request's now_ms
# carries milliseconds (E + 999 or E + 1): the window is computed from now_ms itself, so a
# port that takes "now" in whole seconds (floored, rounded or rounded up) misses a bound.
BOUNDS: dict[str, tuple[int, float, bool, str]] = {
    "idle-exactly-one-hour": (HOUR_MS, 0, True, "the thread idle exactly "
                              "min_rollout_idle_hours (1 h) was not extracted"),
    "idle-one-ms-short": (HOUR_MS - 1, 0, False, "the thread idle one millisecond less "
                          "than min_rollout_idle_hours (1 h) was extracted"),
    "age-exactly-ten-days": (TEN_DAYS_MS, 0, True, "the thread exactly "
                             "max_rollout_age_days (10 days) old was not extracted"),
    "age-one-ms-over": (TEN_DAYS_MS + 1, 0, False, "the thread one millisecond "
                        "older than max_rollout_age_days (10 days) was extracted"),
    "idle-exactly-one-hour-now-at-999ms": (
        HOUR_MS - 999, 0.999, True, "with now_ms at .999 s the thread idle exactly 1 h was not "
        "extracted: the idle bound was not computed from now in milliseconds"),
    "idle-one-ms-short-now-at-999ms": (
        HOUR_MS - 1000, 0.999, False, "with now_ms at .999 s the thread idle one millisecond "
        "less than 1 h was extracted: now was rounded up to the next second"),
    "idle-exactly-one-hour-now-at-1ms": (
        HOUR_MS - 1, 0.001, True, "with now_ms at .001 s the thread idle exactly 1 h was not "
        "extracted: the idle bound was not computed from now in milliseconds"),
    "age-exactly-ten-days-now-at-999ms": (
        TEN_DAYS_MS - 999, 0.999, True, "with now_ms at .999 s the thread exactly 10 days old "
        "was not extracted: now was rounded up to the next second"),
    "age-one-ms-over-now-at-999ms": (
        TEN_DAYS_MS - 998, 0.999, False, "with now_ms at .999 s the thread one millisecond "
        "older than 10 days was extracted: the age bound was not computed from now in "
        "milliseconds"),
    "age-exactly-ten-days-now-at-1ms": (
        TEN_DAYS_MS - 1, 0.001, True, "with now_ms at .001 s the thread exactly 10 days old "
        "was not extracted: now was rounded up to the next second"),
    # the clamped ends (CFG-02): a configured 49 h idle is 48 h and 91 days of age is 90
    "idle-clamped-exactly-48-hours": (48 * HOUR_MS, 0, True, "with min_rollout_idle_hours "
                                      "49 (clamped to 48) the thread idle exactly 48 h was not "
                                      "extracted"),
    "idle-clamped-one-ms-short": (48 * HOUR_MS - 1, 0, False, "with min_rollout_idle_hours 49 "
                                  "(clamped to 48) the thread idle one millisecond less than "
                                  "48 h was extracted"),
    "age-clamped-exactly-90-days": (9 * TEN_DAYS_MS, 0, True, "with max_rollout_age_days 91 "
                                    "(clamped to 90) the thread exactly 90 days old was not "
                                    "extracted"),
    "age-clamped-one-ms-over": (9 * TEN_DAYS_MS + 1, 0, False, "with max_rollout_age_days 91 "
                                "(clamped to 90) the thread one millisecond older than 90 days "
                                "was extracted: the age was not clamped"),
}
# bounds whose window is configured beyond a clamp (the rest use the defaults' 1 h and 10 days)
BOUND_CONFIG: dict[str, dict[str, int]] = {
    "idle-clamped-exactly-48-hours": {"min_rollout_idle_hours": 49},
    "idle-clamped-one-ms-short": {"min_rollout_idle_hours": 49},
    "age-clamped-exactly-90-days": {"max_rollout_age_days": 91},
    "age-clamped-one-ms-over": {"max_rollout_age_days": 91},
}
# the control thread of a bound that extracts nothing must itself be idle long enough
CONTROL_AGE = {"idle-clamped-one-ms-short": 49 * HOUR_MS}


@check("p1.cand.window-bounds", title="both ends of the idle/age window are inclusive, to the "
       "millisecond", rules=("P1-CAND-02", "CFG-02"), level="SHOULD", area="phase1",
       needs=("clock.inject",))
@pytest.mark.parametrize("bound", sorted(BOUNDS))
def test_window_bounds(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                       clock: HarnessClock, bound: str) -> None:
    configure(home, BOUND_CONFIG.get(bound))
    age_ms, advance_s, extracted, wrong = BOUNDS[bound]
    thread = home.add_thread(updated_ago_ms=age_ms)
    control = None if extracted else home.add_thread(
        updated_ago_ms=CONTROL_AGE.get(bound, CONTROL_AGE_MS))
    model.on("stage1", json_output(VALID_OUTPUT))
    if advance_s:
        clock.advance(advance_s)
    run_startup(home)
    assert bool(requests_for(model, thread.id)) is extracted, wrong
    if control is not None:
        extracted_once(model, control.id, CONTROL)


@check("p1.cand.per-startup-clamp", title="a startup claims at most 128 threads, however many "
       "the configuration allows", rules=("P1-CAND-03", "CFG-02"), level="MUST", area="phase1")
@pytest.mark.parametrize("limit", [128, 129], ids=["exactly-128", "129-clamps-to-128"])
def test_per_startup_clamp(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                           limit: int) -> None:
    configure(home, {"max_rollouts_per_startup": limit})
    # 129 eligible threads a second apart; the oldest is the one left for the next startup
    threads = home.add_threads(129, updated_ago_ms=300 * MINUTE_MS, stagger_ms=1000)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    extracted = [t for t in threads if requests_for(model, t.id)]
    assert len(extracted) == 128, \
        f"with max_rollouts_per_startup {limit} and 129 eligible threads the startup did not " \
        "extract exactly 128 (the limit is clamped to 1..128)"
    assert not requests_for(model, threads[0].id), \
        "the thread left out was not the oldest of the 129 (candidates are taken newest first)"

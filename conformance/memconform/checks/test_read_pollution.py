"""POLL: external context marks a session's thread polluted (fixtures/read/pollution.json,
through `turn.event`), and the next consolidation forgets what the thread contributed."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks import stage1
from memconform.checks.consolidation import (
    DIFF_FILE,
    DONE,
    RAW,
    SUMMARIES,
    Capture,
    agent_finishes,
    configure,
    expire_cooldown,
    global_job,
    raw_threads,
    seed_memory,
    summary_files,
)
from memconform.checks.stage1 import VALID_OUTPUT, requests_for
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output, message
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail, only

CASES = fixture_json("read", "pollution.json")["cases"]
NEEDS = ("turn.event",)
WEB_SEARCH = {"type": "web_search_call", "id": "ws_1", "status": "completed",
              "action": {"type": "search", "query": "weather"}}


def event(impl: Adapter, home: CodexHome, clock: HarnessClock, thread_id: str,
          item: dict[str, Any]) -> bool:
    result = impl.call("turn.event", {"home": str(home.path), "thread_id": thread_id,
                                      "item": item, "now_ms": clock.request_now(), "seed": 1})
    return bool(result["polluted"])


def memory_mode(home: CodexHome, thread_id: str) -> str:
    row = only(home.query(home.state_db, "SELECT memory_mode FROM threads WHERE id = ?",
                          (thread_id,)), "threads row for the session's thread")
    return str(row["memory_mode"])


def consolidated(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 capture: Capture | None = None) -> dict[str, Any]:
    """One startup whose agent finishes at once; the consolidation job, which must be done."""
    agent_finishes(model, message(DONE).probed(capture) if capture else None)
    run_startup(home)
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["status"] == "done", \
        "the startup's consolidation (the agent finishing at once) did not leave the job done"
    return job


def deleted_in_diff(capture: Capture) -> list[str]:
    """The `- D path` lines of the workspace diff the agent was started with."""
    if not capture.arrived:
        fail("no consolidation request reached the model")
    if capture.diff_text is None:
        fail(f"{DIFF_FILE} was not on disk when the consolidation agent started")
    if "## Status" not in capture.diff_text:
        fail(f"{DIFF_FILE} has no ## Status section")
    section = capture.diff_text.split("## Status", 1)[1].split("## Diff", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- D ")]


def polluting(impl: Adapter, home: CodexHome, clock: HarnessClock, thread_id: str,
              what: str) -> None:
    """A web search in the thread's session, which must mark it polluted."""
    assert event(impl, home, clock, thread_id, WEB_SEARCH), \
        f"turn.event did not report a web search as polluting {what}"


@check("read.poll.item", title="with disable_on_external_context, web and tool search and "
       "polluting MCP calls mark the thread polluted for good; local and memory tools do not; "
       "a thread in the last consolidation re-enqueues it", rules=(
           "POLL-01", "POLL-02", "POLL-03", "POLL-04"), level="SHOULD", area="read",
       needs=NEEDS)
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_item(impl: Adapter, home: CodexHome, clock: HarnessClock,
              case: dict[str, Any]) -> None:
    home.write_config(memories=case["memories"])
    thread = home.add_thread(memory_mode=case["mode_before"])
    watermark = thread.updated_at_ms // 1000
    if case["selected"] is not None:
        home.add_stage1_output(thread.id, source_updated_at=watermark, raw_memory="- m",
                               rollout_summary="s", selected_for_phase2=case["selected"])
    ahead = case.get("watermark_ahead_s")
    current = watermark if ahead is None else clock.now + ahead
    home.add_job("memory_consolidate_global", "global", status="done",
                 finished_at=clock.now - 60, input_watermark=current,
                 last_success_watermark=current)
    before = global_job(home)
    assert before is not None, "the harness's consolidation job row is missing"
    item = f"the {case['item']['type']} item"
    polluted = event(impl, home, clock, thread.id, case["item"])
    assert polluted == case["polluted"], (
        f"turn.event did not report {item} as polluting the thread" if case["polluted"] else
        f"turn.event reported {item} as polluting the thread")
    assert memory_mode(home, thread.id) == case["mode_after"], \
        f"after {item} the thread's memory_mode is not {case['mode_after']}"
    after = global_job(home)
    if after is None:
        fail(f"after {item} the memory_consolidate_global job row is gone")
    if not case["enqueued"]:
        assert after == before, \
            f"{item} changed the memory_consolidate_global job row, which it must leave alone"
        if not case["polluted"]:
            # control: the same switch set, a web search does pollute a fresh thread, so the
            # nothing above was the item's (or the switch's) doing
            home.write_config(memories={**case["memories"], "disable_on_external_context": True})
            polluting(impl, home, clock, home.add_thread().id,
                      "a fresh thread with disable_on_external_context on (control)")
        return
    assert after["status"] == "pending", \
        f"{item} in a thread of the last consolidation did not re-enqueue the consolidation " \
        "job (its status is not pending)"
    if ahead is not None and ahead >= 0:
        seeded = "now" if ahead == 0 else f"now + {ahead} s"
        advanced = f"{item} did not raise the consolidation job's input_watermark of " \
            f"{seeded} (an enqueue must neither lower it to now nor leave it as it was)"
    else:
        advanced = f"{item} did not advance the consolidation job's input_watermark"
    assert after["input_watermark"] > before["input_watermark"], advanced
    if clock.injected and (ahead is None or ahead < 0):
        assert after["input_watermark"] == clock.now, \
            f"{item} did not set the consolidation job's input_watermark to now"
    assert after["finished_at"] == before["finished_at"], \
        f"{item} reset the consolidation job's finished_at (the success cooldown)"
    assert after["retry_remaining"] >= 3, \
        f"{item} left the re-enqueued consolidation job fewer than 3 retries"


@check("read.poll.creates-job", title="polluting a thread of the last consolidation creates "
       "the consolidation job, pending, when its row is missing", rules="POLL-04",
       level="SHOULD", area="read", needs=NEEDS)
def test_creates_job(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.write_config(memories={"disable_on_external_context": True})
    thread = home.add_thread()
    home.add_stage1_output(thread.id, source_updated_at=thread.updated_at_ms // 1000,
                           raw_memory="- m", rollout_summary="s", selected_for_phase2=1)
    if global_job(home) is not None:
        raise RuntimeError("the harness seeded a consolidation job row")
    polluting(impl, home, clock, thread.id, "a thread of the last consolidation")
    job = global_job(home)
    if job is None:
        fail("the web search in a thread of the last consolidation, with no consolidation job "
             "row, did not create one")
    assert job["status"] == "pending", "the consolidation job created by the web search is " \
        "not pending"
    assert job["retry_remaining"] == 3, "the consolidation job created by the web search does " \
        "not start with 3 retries"
    if clock.injected:
        assert job["input_watermark"] == clock.now, "the consolidation job created by the web " \
            "search does not carry input_watermark = now"
    else:
        assert job["input_watermark"] >= thread.updated_at_ms // 1000, "the consolidation job " \
            "created by the web search carries an input_watermark before the thread's update"


@check("read.poll.no-state-db", title="a polluting item in a home without a state database "
       "marks nothing and creates no state database", rules=("POLL-03", "START-02"),
       level="SHOULD", area="read", needs=(*NEEDS, "startup.without-state-db"))
def test_no_state_db(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.write_config(memories={"disable_on_external_context": True})
    if home.state_db.exists():
        raise RuntimeError("the harness built a home with a state database")
    polluted = event(impl, home, clock, "019a0000-0000-7000-8000-000000000001", WEB_SEARCH)
    assert polluted is False, "turn.event reported a thread polluted in a home without a " \
        "state database, where no thread row exists to mark"
    assert not home.state_db.exists(), "turn.event created a state database"


@check("read.poll.floored-now", title="a polluting item at now_ms .999 s re-enqueues the "
       "consolidation with input_watermark = now rounded down to whole seconds",
       rules="POLL-04", level="SHOULD", area="read", needs=(*NEEDS, "clock.inject"))
def test_floored_now(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    """A thread of the last consolidation is polluted one millisecond before the next second."""
    home.write_config(memories={"disable_on_external_context": True})
    thread = home.add_thread()
    watermark = thread.updated_at_ms // 1000
    home.add_stage1_output(thread.id, source_updated_at=watermark, raw_memory="- m",
                           rollout_summary="s", selected_for_phase2=1)
    home.add_job("memory_consolidate_global", "global", status="done",
                 finished_at=clock.now - 60, input_watermark=watermark,
                 last_success_watermark=watermark)
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    polluting(impl, home, clock, thread.id, "a thread of the last consolidation")
    job = global_job(home)
    if job is None:
        fail("after the web search the memory_consolidate_global job row is gone")
    assert job["status"] == "pending", "the web search in a thread of the last consolidation " \
        "did not re-enqueue the consolidation job (its status is not pending)"
    assert job["input_watermark"] == clock.now, "the consolidation job's input_watermark is " \
        "not now_ms rounded down to seconds (.999 s must not round up)"


@check("read.poll.forgotten", title="the consolidation after a selected thread is polluted "
       "drops its raw memory and rollout summary", rules=("POLL-04", "POLL-05"),
       level="SHOULD", area="read", needs=NEEDS)
def test_forgotten(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                   run_startup: StartupRunner) -> None:
    configure(home, {"disable_on_external_context": True})
    kept = seed_memory(home, slug="kept")
    polluted = seed_memory(home, slug="polluted")
    consolidated(home, model, run_startup)
    gone = only([f for f in summary_files(home) if f.endswith("-polluted.md")],
                f"{SUMMARIES} file of the thread with slug polluted after the first consolidation")
    polluting(impl, home, clock, polluted, "the consolidated thread")
    expire_cooldown(home)
    model.reset()
    capture = Capture(home)
    consolidated(home, model, run_startup, capture)
    assert model.probe_errors == [], "the diff file could not be read when the agent started"
    assert raw_threads(home) == [kept], \
        f"{RAW} after the next consolidation does not hold only the unpolluted thread"
    assert gone not in summary_files(home), \
        "the polluted thread's rollout summary is still there after the next consolidation"
    assert f"- D {SUMMARIES}/{gone}" in deleted_in_diff(capture), \
        f"{DIFF_FILE} does not list the polluted thread's rollout summary as deleted"


@check("read.poll.cooldown-kept", title="re-enqueueing for a polluted thread keeps the success "
       "cooldown: the next startup inside it does not consolidate", rules=("POLL-05",),
       level="SHOULD", area="read", needs=NEEDS)
def test_cooldown_kept(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                       run_startup: StartupRunner) -> None:
    configure(home, {"disable_on_external_context": True})
    thread = seed_memory(home)
    consolidated(home, model, run_startup)
    polluting(impl, home, clock, thread, "the consolidated thread")
    model.reset()
    run_startup(home)
    assert model.of_kind("consolidation") == [], \
        "a startup inside the success cooldown consolidated after the pollution re-enqueued " \
        "the job"
    job = global_job(home)
    if job is None:
        fail("the memory_consolidate_global job row is gone")
    assert job["status"] == "pending", \
        "the pollution did not leave the consolidation job pending through the cooldown"


@check("read.poll.not-a-candidate", title="a polluted thread is never extracted again",
       rules=("POLL-03", "P1-CAND-01"), level="SHOULD", area="read", needs=NEEDS)
def test_not_a_candidate(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                         run_startup: StartupRunner) -> None:
    stage1.configure(home, {"disable_on_external_context": True})
    polluted, clean = home.add_thread(), home.add_thread(updated_ago_ms=3 * 3_600_000)
    polluting(impl, home, clock, polluted.id, "a fresh thread")
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert requests_for(model, polluted.id) == [], \
        "the next startup extracted the polluted thread"
    assert len(requests_for(model, clean.id)) == 1, \
        "the next startup did not extract the clean thread once"

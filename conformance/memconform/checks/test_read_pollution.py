"""POLL: external context marks a session's thread polluted (fixtures/read/pollution.json,
through `turn.event`), and the next consolidation forgets what the thread contributed."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks import stage1
from memconform.checks.consolidation import (
    SUMMARIES,
    captured_run,
    configure,
    diff_status,
    expire_cooldown,
    global_job,
    raw_threads,
    run_to_success,
    seed_memory,
    summary_files,
)
from memconform.checks.stage1 import VALID_OUTPUT, requests_for
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.resources import fixture_json

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
    [row] = home.query(home.state_db, "SELECT memory_mode FROM threads WHERE id = ?",
                       (thread_id,))
    return str(row["memory_mode"])


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
    home.add_job("memory_consolidate_global", "global", status="done",
                 finished_at=clock.now - 60, input_watermark=watermark,
                 last_success_watermark=watermark)
    before = global_job(home)
    assert event(impl, home, clock, thread.id, case["item"]) is case["polluted"]
    assert memory_mode(home, thread.id) == case["mode_after"]
    after = global_job(home)
    assert after is not None and before is not None
    if not case["enqueued"]:
        assert after == before, "the consolidation job changed"
        return
    assert after["status"] == "pending", f"job status {after['status']}"
    assert after["input_watermark"] > before["input_watermark"], "input_watermark not advanced"
    if clock.injected:
        assert after["input_watermark"] == clock.now, "input_watermark is not now"
    assert after["finished_at"] == before["finished_at"], "the success cooldown was reset"
    assert after["retry_remaining"] >= 3


@check("read.poll.forgotten", title="the consolidation after a selected thread is polluted "
       "drops its raw memory and rollout summary", rules=("POLL-04", "POLL-05"),
       level="SHOULD", area="read", needs=NEEDS)
def test_forgotten(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                   run_startup: StartupRunner) -> None:
    configure(home, {"disable_on_external_context": True})
    kept = seed_memory(home, slug="kept")
    polluted = seed_memory(home, slug="polluted")
    run_to_success(home, model, run_startup)
    [gone] = [f for f in summary_files(home) if f.endswith("-polluted.md")]
    assert event(impl, home, clock, polluted, WEB_SEARCH)
    expire_cooldown(home)
    model.reset()
    capture = captured_run(home, model, run_startup)
    assert raw_threads(home) == [kept], "the polluted thread is still in raw_memories.md"
    assert gone not in summary_files(home), "the polluted thread's summary is still there"
    assert f"- D {SUMMARIES}/{gone}" in diff_status(capture.diff)


@check("read.poll.cooldown-kept", title="re-enqueueing for a polluted thread keeps the success "
       "cooldown: the next startup inside it does not consolidate", rules=("POLL-05",),
       level="SHOULD", area="read", needs=NEEDS)
def test_cooldown_kept(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                       run_startup: StartupRunner) -> None:
    configure(home, {"disable_on_external_context": True})
    thread = seed_memory(home)
    run_to_success(home, model, run_startup)
    assert event(impl, home, clock, thread, WEB_SEARCH)
    model.reset()
    run_startup(home)
    assert model.of_kind("consolidation") == [], "consolidated inside the cooldown"
    job = global_job(home)
    assert job is not None and job["status"] == "pending"


@check("read.poll.not-a-candidate", title="a polluted thread is never extracted again",
       rules=("POLL-03", "P1-CAND-01"), level="SHOULD", area="read", needs=NEEDS)
def test_not_a_candidate(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                         run_startup: StartupRunner) -> None:
    stage1.configure(home, {"disable_on_external_context": True})
    polluted, clean = home.add_thread(), home.add_thread(updated_ago_ms=3 * 3_600_000)
    assert event(impl, home, clock, polluted.id, WEB_SEARCH)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert requests_for(model, polluted.id) == [], "the polluted thread was extracted"
    assert len(requests_for(model, clean.id)) == 1, "the clean thread was not extracted"

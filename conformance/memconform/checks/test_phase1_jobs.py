"""P1-JOB / P1-OUT / P1-EMPTY: what one extraction writes, for every kind of model answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks.stage1 import (
    VALID_OUTPUT,
    ago_at_ms,
    assert_now,
    configure,
    extracted_once,
    global_job,
    job,
    output,
    requests_for,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome, Thread
from memconform.mockmodel import (
    MockModel,
    Reply,
    connection_reset,
    cut_stream,
    failed,
    http_error,
    json_output,
    message,
    stalled,
)
from memconform.registry import check
from memconform.resources import fixture_json

OUTPUTS = fixture_json("phase1", "outputs.json")
RETRY_DELAY_S = 3600
STAGE1 = "memory_stage1"


def _ids(group: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", OUTPUTS[group], ids=[c["id"] for c in OUTPUTS[group]])


def extract_once(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 reply: Reply) -> Thread:
    configure(home)
    thread = home.add_thread()
    model.on("stage1", reply)
    run_startup(home)
    extracted_once(model, thread.id)
    return thread


def assert_failed_once(home: CodexHome, thread: Thread, clock: HarnessClock) -> None:
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["status"] == "error", "the failed extraction did not leave the job in error"
    assert row["retry_remaining"] == 2, "the failed extraction did not spend exactly one retry"
    assert row["lease_until"] is None, "the failed job still holds its lease"
    assert row["last_error"], "the failed job records no last_error"
    assert_now(row["finished_at"], clock, "finished_at of the failed job")
    assert row["retry_at"] == row["finished_at"] + RETRY_DELAY_S, \
        "the failed job's retry_at is not one hour after finished_at"
    assert row["last_success_watermark"] is None, \
        "the failed first extraction recorded a success watermark"
    assert output(home, thread.id) is None, "a stage1_outputs row was written for a failed " \
        "extraction"


@check("p1.job.success", title="a successful extraction leaves the job done with its "
       "watermark", rules=("P1-JOB-01", "P1-JOB-03"), level="MUST", area="phase1")
def test_success_job_row(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         clock: HarnessClock) -> None:
    thread = extract_once(home, model, run_startup, json_output(VALID_OUTPUT))
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    watermark = thread.updated_at_ms // 1000
    assert row["status"] == "done", "the successful extraction did not leave the job done"
    assert row["retry_remaining"] == 3, "the successful job's retry_remaining is not 3"
    assert row["input_watermark"] == watermark, \
        "the job's input_watermark is not the thread's updated_at in seconds"
    assert row["last_success_watermark"] == watermark, \
        "the job's last_success_watermark is not its input watermark"
    assert row["last_error"] is None, "the successful job records a last_error"
    assert row["lease_until"] is None, "the finished job still holds its lease"
    assert row["retry_at"] is None, "the successful job has a retry_at"
    assert row["ownership_token"], "the job has no ownership_token"
    assert row["worker_id"], "the job has no worker_id"
    assert row["worker_id"] != thread.id, \
        "the job's worker_id is the extracted thread, not the running session"
    assert_now(row["started_at"], clock, "started_at")
    assert_now(row["finished_at"], clock, "finished_at")


@check("p1.out.row", layout="v1", title="a valid answer is stored with Codex's exact column values",
       rules="P1-OUT-02", level="MUST", area="phase1")
def test_output_row(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    clock: HarnessClock) -> None:
    thread = extract_once(home, model, run_startup, json_output(VALID_OUTPUT))
    row = output(home, thread.id)
    assert row is not None, "the valid answer was not stored: no stage1_outputs row"
    assert row["source_updated_at"] == thread.updated_at_ms // 1000, \
        "source_updated_at is not the thread's updated_at in seconds"
    assert row["raw_memory"] == VALID_OUTPUT["raw_memory"], \
        "raw_memory is not stored as the model returned it"
    assert row["rollout_summary"] == VALID_OUTPUT["rollout_summary"], \
        "rollout_summary is not stored as the model returned it"
    assert row["rollout_slug"] == VALID_OUTPUT["rollout_slug"], \
        "rollout_slug is not stored as the model returned it"
    assert_now(row["generated_at"], clock, "generated_at")
    assert row["usage_count"] is None, "a new output has a usage_count"
    assert row["last_usage"] is None, "a new output has a last_usage"
    assert row["selected_for_phase2"] == 0, "a new output is marked selected for Phase 2"
    assert row["selected_for_phase2_source_updated_at"] is None, \
        "a new output has a selected_for_phase2_source_updated_at"


def _split_answer(parts: int) -> Reply:
    """VALID_OUTPUT's JSON in one assistant message, cut between its members into `parts`
    output_text parts (joined with nothing or with a newline, the parts are the same JSON)."""
    text = json.dumps(VALID_OUTPUT)
    pieces, start = [], 0
    for _ in range(parts - 1):
        cut = text.index(", ", start) + 2
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return Reply(items=({"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": piece, "annotations": []} for piece in pieces]},))


@check("p1.out.split-text", title="an answer whose JSON arrives in several output_text parts of "
       "the assistant message is read as their concatenation", rules="P1-OUT-01",
       level="MUST", area="phase1", layout="v1")
@pytest.mark.parametrize("parts", [2, 3], ids=["two-parts", "three-parts"])
def test_split_text(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    parts: int) -> None:
    thread = extract_once(home, model, run_startup, _split_answer(parts))
    row = output(home, thread.id)
    assert row is not None, f"the answer split over {parts} output_text parts was not stored " \
        "(cut between JSON members, the parts joined are the answer's JSON)"
    assert (row["raw_memory"], row["rollout_summary"]) == \
        (VALID_OUTPUT["raw_memory"], VALID_OUTPUT["rollout_summary"]), \
        f"the answer split over {parts} output_text parts was not stored as its joined JSON"

@check("p1.out.enqueues-phase2", title="a stored output enqueues the global consolidation job",
       rules="P1-JOB-04", level="MUST", area="phase1")
def test_success_enqueues(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread = extract_once(home, model, run_startup, json_output(VALID_OUTPUT))
    row = global_job(home)
    assert row is not None, "the memory_consolidate_global job row was deleted"
    assert row["input_watermark"] is not None, "the consolidation job has no input_watermark"
    assert row["input_watermark"] >= thread.updated_at_ms // 1000, \
        "the stored output did not advance the consolidation job's input_watermark to S"


@check("p1.out.enqueue-keeps-higher-watermark", title="a stored output never lowers the "
       "consolidation job's input_watermark", rules="P1-JOB-04", level="MUST", area="phase1")
def test_enqueue_keeps_higher_watermark(home: CodexHome, model: MockModel,
                                        run_startup: StartupRunner) -> None:
    configure(home)
    thread = home.add_thread()
    higher = thread.updated_at_ms // 1000 + 3600  # newer input than this thread's S
    home.execute(home.memories_db, "UPDATE jobs SET input_watermark = ? WHERE kind = "
                 "'memory_consolidate_global' AND job_key = 'global'", (higher,))
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    extracted_once(model, thread.id)
    row = global_job(home)
    assert row is not None, "the memory_consolidate_global job row was deleted"
    assert row["input_watermark"] >= higher, \
        "the stored output lowered the consolidation job's input_watermark from a newer " \
        "watermark to the thread's S (it must be at least S, never less than it was)"


@check("p1.out.slug", title="rollout_slug may be omitted or null and is stored as returned",
       rules="P1-OUT-02", level="MUST", area="phase1", layout="v1")
@_ids("slugs")
def test_slug(home: CodexHome, model: MockModel, run_startup: StartupRunner,
              case: dict[str, Any]) -> None:
    thread = extract_once(home, model, run_startup, json_output(case["answer"]))
    row = output(home, thread.id)
    assert row is not None, "the valid answer was not stored: no stage1_outputs row"
    assert row["rollout_slug"] == case["stored"], \
        "rollout_slug is not stored as the model returned it"


@check("p1.out.invalid", title="an answer that is not a strict StageOneOutput fails the job "
       "and stores nothing", rules=("P1-OUT-01", "P1-JOB-05"), level="MUST", area="phase1")
@_ids("invalid")
def test_invalid_output(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                        clock: HarnessClock, case: dict[str, Any]) -> None:
    thread = extract_once(home, model, run_startup, message(case["text"]))
    assert_failed_once(home, thread, clock)


NAMED = [c for c in OUTPUTS["invalid"] if "names" in c]


@check("p1.out.error-names-field", title="a failed answer's last_error names the field at "
       "fault", rules="P1-JOB-05", level="SHOULD", area="phase1", layout="v1")
@pytest.mark.parametrize("case", NAMED, ids=[c["id"] for c in NAMED])
def test_error_names_field(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                           case: dict[str, Any]) -> None:
    thread = extract_once(home, model, run_startup, message(case["text"]))
    row = job(home, thread.id)
    assert row is not None and row["status"] == "error", \
        "the answer did not leave the thread's stage-1 job in error"
    name, error = case["names"], row["last_error"] or ""
    assert any(f"{quote}{name}{end}" in error for quote, end in ("``", "''", '""')), \
        f"the job's last_error does not name the field `{name}` (quoted)"


FAULTS = {
    "http-500": http_error(500, "temporary failure"),
    "http-429": http_error(429, "slow down"),
    "http-400": http_error(400, "bad request"),
    "response-failed": failed("the model broke"),
    "cut-after-item": cut_stream(json_output(VALID_OUTPUT)),
    "cut-before-item": cut_stream(Reply()),
    "connection-reset": connection_reset(),
}
IDLE_TIMEOUT_MS = 500


@check("p1.model.fault", title="a failed model call fails the job with retry bookkeeping and "
       "never a partial row", rules="P1-JOB-05", level="MUST", area="phase1")
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_model_fault(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     clock: HarnessClock, fault: str) -> None:
    thread = extract_once(home, model, run_startup, FAULTS[fault])
    assert_failed_once(home, thread, clock)


@check("p1.model.stall", title="a stream that stalls past the provider's idle timeout fails the"
       " job", rules="P1-JOB-05", level="MUST", area="phase1")
def test_model_stall(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     clock: HarnessClock) -> None:
    configure(home, provider={"stream_idle_timeout_ms": IDLE_TIMEOUT_MS})
    thread = home.add_thread()
    model.on("stage1", stalled(json_output(VALID_OUTPUT), 4 * IDLE_TIMEOUT_MS / 1000))
    run_startup(home)
    extracted_once(model, thread.id)
    assert_failed_once(home, thread, clock)


@check("p1.empty.forget", title="an exactly empty memory or summary deletes the stored row",
       rules=("P1-EMPTY-01", "P1-JOB-04"), level="MUST", area="phase1", layout="v1")
@_ids("forget")
def test_forget(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                clock: HarnessClock, case: dict[str, Any]) -> None:
    configure(home)
    thread = home.add_thread()
    watermark = thread.updated_at_ms // 1000
    home.add_stage1_output(thread.id, raw_memory="old memory", rollout_summary="old summary",
                           source_updated_at=watermark - 3600)
    model.on("stage1", json_output(case["answer"]))
    run_startup(home)
    extracted_once(model, thread.id)
    assert output(home, thread.id) is None, \
        "the stage-1 row was not deleted after an empty answer"
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["status"] == "done", "an empty answer did not leave the job done"
    assert row["last_error"] is None, "an empty answer recorded a last_error"
    assert row["last_success_watermark"] == watermark, \
        "forgetting did not record the success watermark"
    assert row["lease_until"] is None, "the job finished by an empty answer still holds its lease"
    assert_now(row["finished_at"], clock, "finished_at of the job finished by an empty answer")
    phase2 = global_job(home)
    assert phase2 is not None, "the memory_consolidate_global job row was deleted"
    assert phase2["input_watermark"] is not None, "the consolidation job has no input_watermark"
    assert phase2["input_watermark"] >= watermark, \
        "forgetting did not advance the consolidation job's input_watermark to S"


@check("p1.empty.blank", title="a whitespace-only memory or summary is forgotten like an "
       "empty one", rules="P1-EMPTY-02", level="SHOULD", area="phase1", layout="v1")
@_ids("blank")
def test_blank(home: CodexHome, model: MockModel, run_startup: StartupRunner,
               case: dict[str, Any]) -> None:
    thread = extract_once(home, model, run_startup, json_output(case["answer"]))
    assert output(home, thread.id) is None, "a whitespace-only answer was stored"
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["status"] == "done", "a whitespace-only answer did not leave the job done"


@check("p1.empty.not-re-extracted", title="after forgetting, the thread is not extracted "
       "again until it changes", rules="P1-EMPTY-01", level="MUST", area="phase1",
       layout="v1")
def test_forget_sticks(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread = extract_once(home, model, run_startup, json_output(OUTPUTS["forget"][2]["answer"]))
    run_startup(home)
    assert len(requests_for(model, thread.id)) == 1, \
        "a forgotten thread was extracted again by the next startup"


HOUR_MS = 3_600_000
LEASE_S = 3600


@check("p1.out.floored-watermark", title="S is the thread's updated_at_ms rounded down to whole "
       "seconds: an update at .999 s is stored at its own second", rules=("P1-OUT-02",
                                                                           "P1-JOB-01",
                                                                           "P1-JOB-03"),
       level="MUST", area="phase1", layout="v1")
def test_floored_watermark(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = home.add_thread(updated_ago_ms=ago_at_ms(home.now_ms, 2 * HOUR_MS, 999))
    if thread.updated_at_ms % 1000 != 999:
        raise RuntimeError("the harness did not put the thread's update time on .999 s")
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    extracted_once(model, thread.id)
    floored = thread.updated_at_ms // 1000
    row = output(home, thread.id)
    assert row is not None, "the valid answer was not stored: no stage1_outputs row"
    assert row["source_updated_at"] == floored, \
        "source_updated_at is not the thread's updated_at_ms rounded down to seconds (an " \
        "update at .999 s belongs to its own second)"
    claimed = job(home, thread.id)
    assert claimed is not None, "the extracted thread has no stage-1 job row"
    assert claimed["input_watermark"] == floored, \
        "the job's input_watermark is not the thread's updated_at_ms rounded down to seconds"
    assert claimed["last_success_watermark"] == floored, \
        "the job's last_success_watermark is not the thread's updated_at_ms rounded down to " \
        "seconds"


@check("p1.job.floored-now", title="with now_ms at .999 s every stored time is the request's "
       "now rounded down to whole seconds", rules=("P1-JOB-01", "P1-JOB-03", "P1-JOB-05",
                                                   "P1-OUT-02"),
       level="SHOULD", area="phase1", needs=("clock.inject",), layout="v1")
@pytest.mark.parametrize("outcome", ["success", "failure"])
def test_floored_now(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     clock: HarnessClock, outcome: str) -> None:
    configure(home)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT) if outcome == "success"
             else message("not json at all"))
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    run_startup(home)
    extracted_once(model, thread.id)
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["started_at"] == clock.now, \
        "started_at is not now_ms rounded down to seconds (.999 s must not round up)"
    assert row["finished_at"] == clock.now, \
        "finished_at is not now_ms rounded down to seconds (.999 s must not round up)"
    if outcome == "success":
        stored = output(home, thread.id)
        assert stored is not None, "the valid answer was not stored: no stage1_outputs row"
        assert stored["generated_at"] == clock.now, \
            "generated_at is not now_ms rounded down to seconds (.999 s must not round up)"
    else:
        assert row["retry_at"] == clock.now + RETRY_DELAY_S, \
            "retry_at is not now_ms rounded down to seconds plus one hour"


@check("p1.job.claim-floored-now", title="a claim at now_ms .999 s writes started_at and "
       "lease_until from now rounded down to whole seconds", rules="P1-JOB-01",
       level="SHOULD", area="phase1", needs=("jobs.stage1", "clock.inject"))
def test_claim_floored_now(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    home.ensure_memories_db()
    clock.advance(0.999)
    got = impl.call("stage1.claim", {
        "home": str(home.path), "thread_id": "t", "watermark": 100, "worker_id": "w",
        "now_ms": clock.now_ms, "seed": 1, "max_running": 2})
    assert got["outcome"] == "claimed", "the first claim of a new thread was refused"
    row = job(home, "t")
    assert row is not None, "the claim wrote no stage-1 job row"
    assert row["started_at"] == clock.now, \
        "started_at is not now_ms rounded down to seconds (.999 s must not round up)"
    assert row["lease_until"] == clock.now + LEASE_S, \
        "lease_until is not now_ms rounded down to seconds plus 3600"


S = 1_000_000  # the claim's watermark in these cases
# name: (the thread's seeded row, other threads running under a live lease, watermark sent,
#        the outcome). Times are seconds relative to now; `input_watermark` None is NULL.
# A refused claim names the first reason that holds, in the order exhausted budget, backoff,
# running (a live lease or the concurrency cap).
REFUSALS: dict[str, tuple[dict[str, Any], int, int, str]] = {
    "exhausted-at-zero": ({"status": "error", "retry_remaining": 0, "retry_at": None,
                           "input_watermark": S}, 0, S, "skipped_retry_exhausted"),
    "exhausted-before-backoff": ({"status": "error", "retry_remaining": 0, "retry_at": 600,
                                  "input_watermark": S}, 0, S, "skipped_retry_exhausted"),
    "backoff-with-one-retry-left": ({"status": "error", "retry_remaining": 1, "retry_at": 600,
                                     "input_watermark": S}, 0, S, "skipped_retry_backoff"),
    "live-lease-with-retry-at-now": ({"status": "running", "retry_remaining": 2, "retry_at": 0,
                                      "lease_until": 600, "ownership_token": "other",
                                      "input_watermark": S}, 0, S, "skipped_running"),
    "cap-reached-for-a-known-thread": ({"status": "error", "retry_remaining": 2,
                                        "retry_at": None, "input_watermark": S - 1}, 2, S,
                                       "skipped_running"),
    "null-input-watermark-is-older-than-zero": ({"status": "error", "retry_remaining": 0,
                                                 "retry_at": 600, "input_watermark": None},
                                                0, 0, "claimed"),
}


@check("p1.job.claim-refusal", title="a refused stage-1 claim names the first reason that "
       "holds: exhausted budget, then backoff, then a live lease or the concurrency cap",
       rules="P1-JOB-02", level="SHOULD", area="phase1", needs=("jobs.stage1", "clock.inject"))
@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_claim_refusal(impl: Adapter, home: CodexHome, clock: HarnessClock, case: str) -> None:
    seeded, others, watermark, outcome = REFUSALS[case]
    home.ensure_memories_db()
    columns = {k: (clock.now + v if k in ("retry_at", "lease_until") and v is not None else v)
               for k, v in seeded.items()}
    home.add_job(STAGE1, "t", worker_id="w", **columns)
    for n in range(others):
        home.add_job(STAGE1, f"other-{n}", status="running", worker_id="w2",
                     ownership_token=f"o{n}", lease_until=clock.now + 600, input_watermark=S)
    before = home.query(home.memories_db, "SELECT * FROM jobs ORDER BY job_key")
    got = impl.call("stage1.claim", {
        "home": str(home.path), "thread_id": "t", "watermark": watermark, "worker_id": "me",
        "now_ms": clock.now_ms, "seed": 1, "max_running": 2})
    assert got["outcome"] == outcome, \
        f"stage1.claim of a thread with the row {seeded} ({others} other threads running) " \
        f"did not answer {outcome}"
    if outcome != "claimed":
        assert home.query(home.memories_db, "SELECT * FROM jobs ORDER BY job_key") == before, \
            "a refused stage-1 claim changed the jobs table"

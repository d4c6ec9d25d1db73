"""Helpers shared by the Phase-1 checks (not collected: no `test_` prefix)."""

from __future__ import annotations

import json
import time
from typing import Any

from memconform.clock import HarnessClock
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, Recorded
from memconform.verdicts import fail

VALID_OUTPUT = {"raw_memory": "- The user's favourite colour is teal.",
                "rollout_summary": "# Colour preference\nThe user shared a preference.",
                "rollout_slug": "favourite_colour"}
MINUTE_MS = 60_000
WALL_TOLERANCE_S = 300


def configure(home: CodexHome, memories: dict[str, Any] | None = None,
              top: dict[str, Any] | None = None, provider: dict[str, Any] | None = None
              ) -> None:
    """Phase-1 friendly config: idle threshold 1 h unless a case sets (or unsets) it.

    Phase 2 runs right after Phase 1 in the same startup and rewrites selection columns, so
    the consolidation job is put in its post-success cooldown: Phase 1 checks then see the
    rows exactly as Phase 1 left them, whatever the implementation's Phase 2 does.
    """
    merged: dict[str, Any] = {"min_rollout_idle_hours": 1, **(memories or {})}
    home.write_config(memories={k: v for k, v in merged.items() if v is not None}, top=top,
                      provider=provider)
    if global_job(home) is None:
        home.add_job("memory_consolidate_global", "global", status="done",
                     finished_at=home.now_ms // 1000 - 60, input_watermark=0,
                     last_success_watermark=0)


def requests_for(model: MockModel, thread_id: str) -> list[Recorded]:
    """Stage-1 requests whose input names the thread (its rollout path holds the id); headers
    and cache keys name the running session instead, so they are not searched."""
    return [r for r in model.of_kind("stage1")
            if isinstance(r.body, dict) and thread_id in json.dumps(r.body.get("input"))]


def extracted_once(model: MockModel, thread_id: str, what: str = "the thread") -> Recorded:
    """The one stage-1 request for the thread; none, or more than one, is the check's fail."""
    sent = requests_for(model, thread_id)
    if not sent:
        fail(f"{what} was not extracted: no stage-1 request names it", expected=1, actual=0)
    if len(sent) > 1:
        fail(f"{what} was extracted more than once", expected=1, actual=len(sent))
    return sent[0]


def job(home: CodexHome, thread_id: str) -> dict[str, Any] | None:
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1' AND "
                      "job_key = ?", (thread_id,))
    return rows[0] if rows else None


def global_job(home: CodexHome) -> dict[str, Any] | None:
    rows = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = "
                      "'memory_consolidate_global' AND job_key = 'global'")
    return rows[0] if rows else None


def output(home: CodexHome, thread_id: str) -> dict[str, Any] | None:
    rows = home.query(home.memories_db, "SELECT * FROM stage1_outputs WHERE thread_id = ?",
                      (thread_id,))
    return rows[0] if rows else None


def assert_now(value: int | None, clock: HarnessClock, what: str) -> None:
    """`value` is "now" in Unix seconds: exactly with an injected clock, roughly otherwise."""
    assert value is not None, f"{what} was not set (it must be now, in Unix seconds)"
    if clock.injected:
        assert value == clock.now, f"{what} is not now (the request's now_ms in Unix seconds)"
    else:
        assert abs(value - time.time()) < WALL_TOLERANCE_S, \
            f"{what} is not now in Unix seconds (seconds away from the wall clock)"


def user_text(request: Recorded) -> str:
    """The text of the one user message of a stage-1 request (the prompt may come before it
    as developer items, as from Codex 0.155.0 on, or in `instructions`)."""
    body = request.body
    assert isinstance(body, dict), "the stage-1 request body is not a JSON object"
    items = body.get("input")
    assert isinstance(items, list), "the stage-1 request has no input list"
    messages = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
    assert len(messages) == 1, "the stage-1 request's input does not hold exactly one user " \
        "message"
    content = messages[0].get("content")
    parts = [p for p in content if isinstance(p, dict) and p.get("type") == "input_text"] \
        if isinstance(content, list) else []
    assert len(parts) == 1, "the stage-1 user message does not have exactly one input_text part"
    text = parts[0].get("text")
    assert isinstance(text, str), "the stage-1 user message's input_text part has no text"
    return text


def ago_at_ms(now_ms: int, ago_ms: int, ms: int) -> int:
    """An `updated_ago_ms` that puts the thread's `updated_at_ms` on millisecond `ms` (0..999) of
    the Unix second holding `now_ms - ago_ms`: threads given the same `ago_ms` share that second,
    whatever the milliseconds of `now_ms` (so the case is exact on the wall clock too)."""
    if not 0 <= ms <= 999:
        raise ValueError(f"millisecond {ms} is not in 0..999")
    return now_ms - ((now_ms - ago_ms) // 1000 * 1000 + ms)

"""Phase 1: claim idle threads, extract a StageOneOutput from each, store or forget it."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memref import jobs, store
from memref.candidates import Candidate, scan
from memref.config import CodexConfig
from memref.prompts import (
    STAGE1_INSTRUCTIONS,
    STAGE1_INSTRUCTIONS_V2,
    stage1_input_v2,
    stage1_user_message,
)
from memref.responses import ModelError, stream_response
from memref.rollout_input import RolloutError, load_items, render, render_rows
from memref.runtime import Runtime
from memref.stage1_output import OUTPUT_SCHEMA, OUTPUT_SCHEMA_V2, OutputError, parse, parse_v2
from memref.truncate import split_bytes

log = logging.getLogger(__name__)
CONCURRENCY = 8
INPUT_PIECE_MAX_BYTES = 8_900  # P1-V2-04: layout v2 sends its input in pieces this size


@dataclass
class Phase1Summary:
    claimed: int = 0
    with_output: int = 0
    no_output: int = 0
    failed: int = 0


@dataclass(frozen=True)
class Job:
    candidate: Candidate
    token: str


def claim_jobs(home: Path, config: CodexConfig, session_thread: str, rt: Runtime) -> list[Job]:
    """Scan newest first; skip up-to-date threads; stop at `max_rollouts_per_startup` claims."""
    state = store.open_state_db(home)
    if state is None:
        return []
    memories = store.memories_db(home, config)
    try:
        limit = config.memories.max_rollouts_per_startup
        claimed: list[Job] = []
        for candidate in scan(state, now_ms=rt.now_ms, current_thread_id=session_thread,
                              max_age_days=config.memories.max_rollout_age_days,
                              min_idle_hours=config.memories.min_rollout_idle_hours):
            if len(claimed) >= limit:
                break
            if jobs.is_up_to_date(memories, candidate.id, candidate.watermark):
                continue
            result = jobs.claim_stage1(memories, candidate.id, candidate.watermark,
                                       worker=session_thread, token=rt.uuid4(), now=rt.now,
                                       max_running=limit)
            if result.outcome is jobs.Claim.CLAIMED and result.token is not None:
                claimed.append(Job(candidate, result.token))
        return claimed
    finally:
        state.close()
        memories.close()


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def request_body(config: CodexConfig, job: Job, items: list[dict[str, Any]],
                 session_thread: str) -> dict[str, Any]:
    """Layout v1: the prompt as instructions and one user message; layout v2: the prompt as a
    developer message and the input cut into user messages (P1-V2-01, P1-V2-04)."""
    path, cwd = job.candidate.rollout_path, job.candidate.cwd
    if config.layout.name == "v2":
        text = stage1_input_v2(path, cwd, render_rows(items, config.model_context_window))
        head: dict[str, Any] = {"input": [
            {"type": "message", "role": "developer",
             "content": [{"type": "input_text", "text": STAGE1_INSTRUCTIONS_V2}]},
            *(_user(piece) for piece in split_bytes(text, INPUT_PIECE_MAX_BYTES))]}
        schema = OUTPUT_SCHEMA_V2
    else:
        prompt = stage1_user_message(path, cwd, render(items, config.model_context_window))
        head = {"instructions": STAGE1_INSTRUCTIONS, "input": [_user(prompt)]}
        schema = OUTPUT_SCHEMA
    return {
        "model": config.extract_model,
        **head,
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "low"},
        "store": False,
        "stream": True,
        "prompt_cache_key": session_thread,
        "text": {"verbosity": "medium", "format": {
            "type": "json_schema", "name": "codex_output_schema", "strict": True,
            "schema": schema}},
    }


def run_job(home: Path, config: CodexConfig, job: Job, session_thread: str, rt: Runtime,
            env: dict[str, str]) -> str:
    """One extraction; returns `with_output`, `no_output` or `failed`."""
    thread = job.candidate.id
    con = store.memories_db(home, config)
    try:
        try:
            if config.provider is None:
                raise ModelError("no model_provider configured")
            items = load_items(Path(job.candidate.rollout_path))
            body = request_body(config, job, items, session_thread)
            headers = {"session-id": session_thread, "thread-id": session_thread,
                       "x-codex-turn-metadata": json.dumps({"request_kind": "memory"})}
            reply = stream_response(config.provider, body, env=env, headers=headers)
            v2 = config.layout.name == "v2"
            output = parse_v2(reply.output_text()) if v2 else \
                parse(reply.output_text()).redacted()
        except (RolloutError, ModelError, OutputError) as exc:
            log.warning("Phase 1 job failed for thread %s: %s", thread, exc)
            jobs.failed(con, thread, job.token, str(exc), now=rt.now)
            return "failed"
        if output.is_empty_v2 if v2 else output.is_empty:
            done = jobs.succeeded_no_output(con, thread, job.token, now=rt.now)
            return "no_output" if done else "failed"
        done = jobs.succeeded(con, thread, job.token, job.candidate.watermark, output,
                              now=rt.now)
        return "with_output" if done else "failed"
    finally:
        con.close()


def run_phase1(home: Path, config: CodexConfig, session_thread: str, rt: Runtime,
               env: dict[str, str]) -> Phase1Summary:
    claimed = claim_jobs(home, config, session_thread, rt)
    summary = Phase1Summary(claimed=len(claimed))
    if not claimed:
        return summary
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        outcomes = list(pool.map(
            lambda job: run_job(home, config, job, session_thread, rt, env), claimed))
    summary.with_output = outcomes.count("with_output")
    summary.no_output = outcomes.count("no_output")
    summary.failed = outcomes.count("failed")
    log.info("stage-1 extraction: %d claimed, %d with output, %d without, %d failed",
             summary.claimed, summary.with_output, summary.no_output, summary.failed)
    return summary

"""Rollout JSONL lines in the shape Codex 0.144.6 writes them (`sessions/**/rollout-*.jsonl`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

CLI_VERSION = "0.144.6"


def iso_ms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{ms % 1000:03d}Z"


def rollout_file_name(thread_id: str, created_ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(created_ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H-%M-%S")
    return f"rollout-{stamp}-{thread_id}.jsonl"


def session_meta(thread_id: str, created_ms: int, cwd: str, source: str) -> dict[str, Any]:
    return {"type": "session_meta", "payload": {
        "session_id": thread_id, "id": thread_id, "timestamp": iso_ms(created_ms), "cwd": cwd,
        "originator": "codex_cli_rs", "cli_version": CLI_VERSION, "source": source,
        "thread_source": "user", "model_provider": "mock"}}


def message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "response_item", "payload": {
        "type": "message", "role": role, "content": [{"type": kind, "text": text}]}}


def conversation(user: str, assistant: str) -> list[dict[str, Any]]:
    """The smallest rollout body with one user turn and its answer."""
    return [message("user", user), message("assistant", assistant)]


def stamp(lines: list[dict[str, Any]], start_ms: int) -> list[dict[str, Any]]:
    """Give each line a `timestamp`, one millisecond apart from `start_ms`."""
    return [{"timestamp": iso_ms(start_ms + i), **line} for i, line in enumerate(lines)]

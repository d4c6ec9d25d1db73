"""Phase-1 input: load a rollout, keep what is worth remembering, redact, truncate (P1-IN)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from memref.redact import redact
from memref.truncate import truncate_middle

KEPT_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "tool_search_call", "tool_search_output",
    "web_search_call",
})
FALLBACK_CONTEXT_WINDOW = 272_000
EFFECTIVE_WINDOW_PERCENT = 95
INPUT_SHARE_PERCENT = 70


log = logging.getLogger(__name__)


class RolloutError(RuntimeError):
    """The rollout file cannot be read or parsed."""


def token_budget(context_window: int | None) -> int:
    """70 % of the model's effective context window (95 % of the configured or fallback one)."""
    window = context_window if context_window and context_window > 0 else \
        FALLBACK_CONTEXT_WINDOW
    effective = window * EFFECTIVE_WINDOW_PERCENT // 100
    return max(effective * INPUT_SHARE_PERCENT // 100, 1)


def _marked(text: str, start: str, end: str) -> bool:
    head, tail = text.lstrip().lower(), text.rstrip().lower()
    return head.startswith(start.lower()) and tail.endswith(end.lower())


def _excluded_fragment(part: dict[str, Any]) -> bool:
    text = part.get("text")
    if not isinstance(text, str):
        return False
    return (_marked(text, "# AGENTS.md instructions", "</INSTRUCTIONS>")
            or _marked(text, "<skill>", "</skill>"))


def keep(item: dict[str, Any]) -> dict[str, Any] | None:
    """The item as the extraction model sees it, or None when it is dropped."""
    kind = item.get("type")
    if kind not in KEPT_ITEM_TYPES:
        return None
    if kind != "message":
        return item
    role = item.get("role")
    if role == "developer":
        return None
    if role != "user":
        return item
    parts = [p for p in item.get("content") or [] if not _excluded_fragment(p)]
    return {**item, "content": parts} if parts else None


def load_items(path: Path) -> list[dict[str, Any]]:
    """The kept `response_item` payloads of a rollout, in file order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RolloutError(f"failed to read rollout {path}: {exc}") from exc
    kept = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:  # P1-IN-04: e.g. a line cut off by a crash
            log.warning("%s:%d: skipping a line that is not JSON: %s", path, number, exc)
            continue
        if not isinstance(entry, dict) or entry.get("type") != "response_item":
            continue
        payload = entry.get("payload")
        if isinstance(payload, dict) and (item := keep(payload)) is not None:
            kept.append(item)
    return kept


def render(items: list[dict[str, Any]], context_window: int | None) -> str:
    """Compact JSON array, redacted as a whole, then cut in the middle to the token budget."""
    serialized = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return truncate_middle(redact(serialized), token_budget(context_window))

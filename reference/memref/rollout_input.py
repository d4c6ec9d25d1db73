"""Phase-1 input: load a rollout, keep what is worth remembering, redact, truncate (P1-IN)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memref.redact import redact
from memref.truncate import truncate_middle, truncate_middle_bytes

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


_LEADING_SPACE = re.compile(r"\s*")
_TAIL_STEP = 4096


def _ends(text: str, width: int) -> tuple[str, str]:
    """The first and the last `width` characters of `text.strip()`, without copying the text
    (a fragment may be a 50 MB log)."""
    low = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]  # `\s*` always matches
    high = len(text)
    while high > low:  # trailing space, a block at a time from the end
        block = text[max(low, high - _TAIL_STEP):high]
        kept = len(block.rstrip())
        high -= len(block) - kept
        if kept:
            break
    return text[low:min(high, low + width)], text[max(low, high - width):high]


def _marked(text: str, start: str, end: str) -> bool:
    """The stripped text starts with `start` and ends with `end`, ignoring letter case. The
    markers are ASCII and neither starts nor ends with white space, so lower-casing only as many
    characters at each end as a marker has decides the same as lower-casing the whole text."""
    head, tail = _ends(text, max(len(start), len(end)))
    return head.lower().startswith(start.lower()) and tail.lower().endswith(end.lower())


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


# -- P1-IN-05: each kept item is parsed as its type and serialized again ----------------------
# Codex reads a rollout item into its own type and writes that type back out: `type` first,
# then the type's fields in its order; unknown fields are dropped, optional fields that are
# absent or null are left out (or written as null, for the few the type always writes), and an
# item that does not fit its type is skipped like an unreadable line.

Shape = Callable[[Any], Any]
REQUIRED, OPTIONAL, NULLABLE = "required", "optional", "nullable"


class UnfitItem(ValueError):
    """The payload does not deserialize as the item type it names."""


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise UnfitItem(f"expected a string, got {value!r:.60}")
    return value


def _anything(value: Any) -> Any:
    return value


def _u64(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 64:
        raise UnfitItem(f"expected an unsigned integer, got {value!r:.60}")
    return value


# The composite shapes are frozen dataclasses, not closures or hand-written constructors: they
# are built at import, and all their work happens in `__call__`, when an item is read, so what
# checks an item is also what a trace of that check sees.

@dataclass(frozen=True)
class _OneOf:
    names: tuple[str, ...]

    def __call__(self, value: Any) -> str:
        if value not in self.names or not isinstance(value, str):
            raise UnfitItem(f"expected one of {', '.join(self.names)}, got {value!r:.60}")
        return value


@dataclass(frozen=True)
class _List:
    element: Shape

    def __call__(self, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise UnfitItem(f"expected an array, got {value!r:.60}")
        return [self.element(v) for v in value]


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise UnfitItem(f"expected an object, got {value!r:.60}")
    return {k: _string(v) for k, v in value.items()}


Field = tuple[str, str, Shape]


@dataclass(frozen=True)
class _Record:
    """An object written back with `type` (when tagged) and then `fields`, in this order."""

    tag: str | None
    fields: tuple[Field, ...]

    def __call__(self, value: Any) -> dict[str, Any]:
        tag = self.tag
        if not isinstance(value, dict):
            raise UnfitItem(f"expected an object, got {value!r:.60}")
        out: dict[str, Any] = {} if tag is None else {"type": tag}
        for name, presence, field_shape in self.fields:
            if name not in value:
                if presence == REQUIRED:
                    raise UnfitItem(f"{tag or 'object'} has no {name}")
                if presence == NULLABLE:
                    out[name] = None
                continue
            raw = value[name]
            if raw is None and presence != REQUIRED:
                if presence == NULLABLE:
                    out[name] = None
                continue
            out[name] = field_shape(raw)
        return out


@dataclass(frozen=True)
class _Tagged:
    """An object whose `type` picks its shape; an unknown type is `{"type": "other"}` when the
    union has a catch-all, else it does not fit."""

    variants: dict[str, Shape]
    other: bool = False

    def __call__(self, value: Any) -> Any:
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str):
            raise UnfitItem(f"expected an object with a type, got {value!r:.60}")
        if kind in self.variants:
            return self.variants[kind](value)
        if self.other:
            return {"type": "other"}
        raise UnfitItem(f"unknown type {kind!r:.40}")


IMAGE_DETAIL = _OneOf(("auto", "low", "high", "original"))
_INPUT_TEXT = _Record("input_text", (("text", REQUIRED, _string),))
_INPUT_IMAGE = _Record("input_image", (("image_url", REQUIRED, _string),
                        ("detail", OPTIONAL, IMAGE_DETAIL)))
_CONTENT = _List(_Tagged({"input_text": _INPUT_TEXT, "input_image": _INPUT_IMAGE,
                          "output_text": _Record("output_text", (("text", REQUIRED, _string),))}))
_TOOL_CONTENT = _List(_Tagged({"input_text": _INPUT_TEXT, "input_image": _INPUT_IMAGE}))


def _tool_output(value: Any) -> Any:
    """A tool's output: its text, or a list of text and image parts."""
    return value if isinstance(value, str) else _TOOL_CONTENT(value)


_ID: Field = ("id", OPTIONAL, _string)
_METADATA: Field = ("internal_chat_message_metadata_passthrough", OPTIONAL,
                    _Record(None, (("turn_id", OPTIONAL, _string),)))
_SHELL_ACTION = _Tagged({"exec": _Record("exec", (
    ("command", REQUIRED, _List(_string)), ("timeout_ms", NULLABLE, _u64),
    ("working_directory", NULLABLE, _string), ("env", NULLABLE, _string_map),
    ("user", NULLABLE, _string)))})
_WEB_ACTION = _Tagged({
    "search": _Record("search", (("query", OPTIONAL, _string),
                       ("queries", OPTIONAL, _List(_string)))),
    "open_page": _Record("open_page", (("url", OPTIONAL, _string),)),
    "find_in_page": _Record("find_in_page", (("url", OPTIONAL, _string),
                             ("pattern", OPTIONAL, _string))),
}, other=True)

ITEM_SHAPES: dict[str, Shape] = {
    "message": _Record("message", (_ID, ("role", REQUIRED, _string),
                        ("content", REQUIRED, _CONTENT),
                        ("phase", OPTIONAL, _OneOf(("commentary", "final_answer"))), _METADATA)),
    "function_call": _Record("function_call", (_ID, ("name", REQUIRED, _string),
                              ("namespace", OPTIONAL, _string),
                              ("arguments", REQUIRED, _string),
                              ("call_id", REQUIRED, _string), _METADATA)),
    "function_call_output": _Record("function_call_output", (_ID,
                                     ("call_id", REQUIRED, _string),
                                     ("output", REQUIRED, _tool_output), _METADATA)),
    "custom_tool_call": _Record("custom_tool_call", (_ID, ("status", OPTIONAL, _string),
                                 ("call_id", REQUIRED, _string), ("name", REQUIRED, _string),
                                 ("input", REQUIRED, _string), _METADATA)),
    "custom_tool_call_output": _Record("custom_tool_call_output", (_ID,
                                        ("call_id", REQUIRED, _string),
                                        ("name", OPTIONAL, _string),
                                        ("output", REQUIRED, _tool_output), _METADATA)),
    "local_shell_call": _Record("local_shell_call", (_ID, ("call_id", NULLABLE, _string),
                                 ("status", REQUIRED,
                                  _OneOf(("completed", "in_progress", "incomplete"))),
                                 ("action", REQUIRED, _SHELL_ACTION), _METADATA)),
    "web_search_call": _Record("web_search_call", (_ID, ("status", OPTIONAL, _string),
                                ("action", OPTIONAL, _WEB_ACTION), _METADATA)),
    "tool_search_call": _Record("tool_search_call", (_ID, ("call_id", NULLABLE, _string),
                                 ("status", OPTIONAL, _string),
                                 ("execution", REQUIRED, _string),
                                 ("arguments", REQUIRED, _anything), _METADATA)),
    "tool_search_output": _Record("tool_search_output", (_ID, ("call_id", NULLABLE, _string),
                                   ("status", REQUIRED, _string),
                                   ("execution", REQUIRED, _string),
                                   ("tools", REQUIRED, _List(_anything)), _METADATA)),
}


def reshape(item: dict[str, Any]) -> dict[str, Any]:
    """A kept item as Codex writes it back (P1-IN-05); `UnfitItem` when it does not fit."""
    shape = ITEM_SHAPES.get(str(item.get("type")))
    if shape is None:
        raise UnfitItem(f"no shape for item type {item.get('type')!r:.40}")
    result: dict[str, Any] = shape(item)
    return result


def load_items(path: Path) -> list[dict[str, Any]]:
    """The kept `response_item` payloads of a rollout, in file order, each re-serialized in
    its type's shape (P1-IN-05)."""
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
        if not isinstance(payload, dict) or payload.get("type") not in KEPT_ITEM_TYPES:
            continue
        try:
            shaped = reshape(payload)
        except UnfitItem as exc:  # P1-IN-05: skipped like a line that is not JSON
            log.warning("%s:%d: skipping a %s item that does not fit its type: %s", path,
                        number, payload.get("type"), exc)
            continue
        if (item := keep(shaped)) is not None:
            kept.append(item)
    return kept


def render(items: list[dict[str, Any]], context_window: int | None) -> str:
    """Compact JSON array, redacted as a whole, then cut in the middle to the token budget."""
    serialized = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return truncate_middle(redact(serialized), token_budget(context_window))


# -- P1-V2-04: layout v2 renders one labelled row per kept item -------------------------------
ROW_MAX_BYTES = 9_904  # a row's JSON, before its label line
TOOL_OUTPUT_MAX_BYTES = 7_904  # a tool output's JSON
TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output",
                          "tool_search_output"})


def _opens_with(item: dict[str, Any], tag: str) -> bool:
    """Whether a text part of the message starts with `tag` (leading whitespace left out,
    any letter case)."""
    return any(isinstance(part, dict) and isinstance(part.get("text"), str)
               and part["text"].lstrip().lower().startswith(tag)
               for part in item.get("content") or [])


def row_label(item: dict[str, Any]) -> str:
    """Who spoke the item (P1-V2-05)."""
    if item.get("type") != "message":
        return "tool"
    if item.get("role") == "assistant":
        return "assistant commentary" if item.get("phase") == "commentary" else \
            "assistant final"
    if _opens_with(item, "<environment_context>"):
        return "harness context"
    if _opens_with(item, "<subagent_notification>"):
        return "other agent"
    return "human user"


def render_rows(items: list[dict[str, Any]], context_window: int | None) -> str:
    """`[label]` and the item's JSON per row, each row redacted and cut in the middle to its
    byte limit; the whole cut to the token budget like layout v1's array."""
    rows = []
    for item in items:
        limit = TOOL_OUTPUT_MAX_BYTES if item.get("type") in TOOL_OUTPUTS else ROW_MAX_BYTES
        serialized = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        rows.append(f"[{row_label(item)}]\n{truncate_middle_bytes(redact(serialized), limit)}\n")
    return truncate_middle("".join(rows), token_budget(context_window))

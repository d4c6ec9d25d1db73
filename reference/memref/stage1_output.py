"""The strict `StageOneOutput` the extraction model must return: three fields in layout v1
(P1-OUT-01..P1-OUT-03), a summary and a slug in layout v2 (P1-V2-01..P1-V2-03)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memref.redact import redact
from memref.truncate import truncate_middle_bytes

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rollout_summary": {"type": "string"},
        "rollout_slug": {"type": ["string", "null"]},
        "raw_memory": {"type": "string"},
    },
    "required": ["rollout_summary", "rollout_slug", "raw_memory"],
    "additionalProperties": False,
}
FIELDS = ("raw_memory", "rollout_summary", "rollout_slug")
OUTPUT_SCHEMA_V2: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rollout_summary": {"type": "string"},
        "rollout_slug": {"type": "string"},
    },
    "required": ["rollout_summary", "rollout_slug"],
    "additionalProperties": False,
}
FIELDS_V2 = ("rollout_summary", "rollout_slug")
SUMMARY_MAX_BYTES_V2 = 9_000  # P1-V2-03: after redaction


class OutputError(ValueError):
    """The model's answer is not a valid StageOneOutput; the text becomes `last_error`."""


@dataclass(frozen=True)
class StageOneOutput:
    raw_memory: str
    rollout_summary: str
    rollout_slug: str | None

    @property
    def is_empty(self) -> bool:
        """An empty memory or summary means "forget this thread" (P1-EMPTY-01); so does a
        whitespace-only one (P1-EMPTY-02), which Codex 0.144.6 would store."""
        return not self.raw_memory.strip() or not self.rollout_summary.strip()

    @property
    def is_empty_v2(self) -> bool:
        """Layout v2 has no raw memory: an empty summary alone means "forget" (P1-V2-03)."""
        return not self.rollout_summary.strip()

    def redacted(self) -> StageOneOutput:
        return StageOneOutput(redact(self.raw_memory), redact(self.rollout_summary),
                              None if self.rollout_slug is None else redact(self.rollout_slug))


def _object(text: str, fields: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The answer as a JSON object with no field outside `fields` and every `required` one a
    string."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OutputError(f"model output is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise OutputError(f"model output must be a JSON object, got {type(value).__name__}")
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise OutputError(f"unknown field `{unknown[0]}`, expected one of "
                          + ", ".join(f"`{f}`" for f in fields))
    for key in required:
        if key not in value:
            raise OutputError(f"missing field `{key}`")
        if not isinstance(value[key], str):
            raise OutputError(f"field `{key}` must be a string, got {json.dumps(value[key])}")
    return value


def parse(text: str) -> StageOneOutput:
    value = _object(text, FIELDS, ("raw_memory", "rollout_summary"))
    slug = value.get("rollout_slug")
    if slug is not None and not isinstance(slug, str):
        raise OutputError("field `rollout_slug` must be a string or null")
    return StageOneOutput(value["raw_memory"], value["rollout_summary"], slug)


def parse_v2(text: str) -> StageOneOutput:
    """A layout-v2 answer: both fields strings, nothing else; the stored raw memory is empty
    and the summary, once redacted, is cut to 9,000 bytes (P1-V2-02, P1-V2-03)."""
    value = _object(text, FIELDS_V2, FIELDS_V2)
    summary = truncate_middle_bytes(redact(value["rollout_summary"]), SUMMARY_MAX_BYTES_V2)
    return StageOneOutput("", summary, redact(value["rollout_slug"]))

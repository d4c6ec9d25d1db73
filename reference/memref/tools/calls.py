"""The memory tools as a model sees them: which are offered, their schemas, and one call
from raw JSON arguments to the output or refusal the model reads (TOOL-GEN-01..06)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memref.config import CodexConfig
from memref.tools import arguments, listing, notes, reading, search
from memref.tools.arguments import Field
from memref.tools.errors import ToolError

NAMESPACE = "memories"
NOTE_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z0-9][a-z0-9-]{0,79}\.md$"

FIELDS: dict[str, tuple[Field, ...]] = {
    "add_ad_hoc_note": (Field("filename", "string", True), Field("note", "string", True)),
    "list": (Field("path", "string"), Field("cursor", "string"), Field("max_results", "uint")),
    "read": (Field("path", "string", True), Field("line_offset", "uint"),
             Field("max_lines", "uint")),
    "search": (Field("queries", "strings", True), Field("match_mode", "match_mode"),
               Field("path", "string"), Field("cursor", "string"),
               Field("context_lines", "uint"), Field("case_sensitive", "bool"),
               Field("normalized", "bool"), Field("max_results", "uint")),
}

DESCRIPTIONS = {
    "add_ad_hoc_note": "Save one new note into the memory store's ad-hoc notes folder. Use "
                       "only when the user explicitly asks to remember, forget or correct "
                       "something; existing notes are never changed.",
    "list": "Show the files and folders directly inside one folder of the memory store.",
    "read": "Return the text of one memory file, optionally from a 1-based line and for a "
            "limited number of lines.",
    "search": "Find lines in memory files that contain the given substrings: any of them, all "
              "on one line, or all within a window of lines; optionally ignoring case and "
              "punctuation.",
}

_PROPERTIES: dict[str, dict[str, Any]] = {
    "filename": {"type": "string", "minLength": 24, "maxLength": 128, "pattern": NOTE_PATTERN,
                 "description": "Name of the new note: YYYY-MM-DDTHH-MM-SS-<slug>.md, the "
                                "current UTC time then a short lowercase slug."},
    "note": {"type": "string", "minLength": 1, "description": "The note's Markdown text."},
    "path": {"type": "string", "description": "Path relative to the memory root."},
    "cursor": {"type": "string", "description": "`next_cursor` of the previous page."},
    "max_results": {"type": "integer", "minimum": 1},
    "line_offset": {"type": "integer", "minimum": 1, "description": "First line, from 1."},
    "max_lines": {"type": "integer", "minimum": 1},
    "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "match_mode": {"type": "object", "properties": {
        "type": {"type": "string", "enum": list(arguments.MODES)},
        "line_count": {"type": "integer", "minimum": 1}}, "required": ["type"],
        "additionalProperties": False},
    "context_lines": {"type": "integer", "minimum": 0},
    "case_sensitive": {"type": "boolean"},
    "normalized": {"type": "boolean",
                   "description": "Compare letters and digits only (punctuation and spaces "
                                  "removed)."},
}


def definition(name: str) -> dict[str, Any]:
    fields = FIELDS[name]
    return {"type": "function", "namespace": NAMESPACE, "name": name,
            "description": DESCRIPTIONS[name], "strict": False,
            "parameters": {"type": "object",
                           "properties": {f.name: _PROPERTIES[f.name] for f in fields},
                           "required": [f.name for f in fields if f.required],
                           "additionalProperties": False}}


def offered(config: CodexConfig) -> list[dict[str, Any]]:
    """The tools of a new turn: only with the feature, `use_memories` and `dedicated_tools`."""
    memories = config.memories
    if not (config.feature_memories and memories.use_memories and memories.dedicated_tools):
        return []
    return [definition(name) for name in FIELDS]


RUNNERS: dict[str, Callable[..., dict[str, Any]]] = {
    "add_ad_hoc_note": notes.add_note,
    "list": listing.list_entries,
    "read": reading.read_file,
    "search": search.search,
}


def call(config: CodexConfig, root: Path, name: str, raw_arguments: str) -> dict[str, Any]:
    """`{"output": …}` or `{"error": message}`: what the model gets back. A tool the turn
    does not offer is an unsupported call."""
    if name not in FIELDS or not offered(config):
        return {"error": f"unsupported call: {NAMESPACE}/{name}"}
    try:
        args = arguments.parse(raw_arguments, FIELDS[name])
        return {"output": RUNNERS[name](root, **args)}
    except ToolError as exc:
        return {"error": str(exc)}

"""Parsing a tool call's JSON arguments strictly: unknown fields, missing fields and wrong
types are refused with a message naming them; `null` means absent for optional fields
(TOOL-GEN-03)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memref.tools.errors import ToolError

MODES = ("any", "all_on_same_line", "all_within_lines")
U64_MAX = 2**64 - 1  # counts are unsigned 64-bit integers


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # "string", "uint", "bool", "strings", "match_mode"
    required: bool = False


def refuse(detail: str) -> ToolError:
    return ToolError(detail)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    return "sequence" if isinstance(value, list) else "map"


def _value(field: Field, value: Any) -> Any:
    def wrong(expected: str) -> ToolError:
        return refuse(f"invalid type: {_describe(value)}, expected {expected} "
                      f"(field `{field.name}`)")

    if field.kind == "string":
        if not isinstance(value, str):
            raise wrong("a string")
    elif field.kind == "bool":
        if not isinstance(value, bool):
            raise wrong("a boolean")
    elif field.kind == "uint":
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("a non-negative integer")
        if value < 0:
            raise refuse(f"invalid value: integer `{value}`, expected a non-negative integer "
                         f"(field `{field.name}`)")
        if value > U64_MAX:
            raise refuse(f"invalid number: {value} does not fit an unsigned 64-bit integer "
                         f"(field `{field.name}`)")
    elif field.kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise wrong("a sequence of strings")
    else:
        return _match_mode(field, value)
    return value


def _match_mode(field: Field, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise refuse(f"invalid type: {_describe(value)}, expected a map (field `{field.name}`)")
    if "type" not in value:
        raise refuse("missing field `type` in `match_mode`")
    kind = value["type"]
    if not isinstance(kind, str):
        raise refuse(f"invalid type: {_describe(kind)}, expected the name of a match mode "
                     "(field `match_mode.type`)")
    if kind not in MODES:
        raise refuse(f"unknown variant {_describe(kind)} of `match_mode`, expected one of "
                     + ", ".join(f"`{m}`" for m in MODES))
    # other keys inside match_mode are ignored (TOOL-GEN-03)
    if kind != "all_within_lines":
        return {"type": kind}
    if "line_count" not in value:
        raise refuse("missing field `line_count` in `match_mode`")
    count = _value(Field("match_mode.line_count", "uint"), value["line_count"])
    return {"type": kind, "line_count": count}


def parse(raw: str, fields: tuple[Field, ...]) -> dict[str, Any]:
    """The arguments as a dict with every field present (None when absent)."""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise refuse(f"arguments are not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise refuse(f"invalid type: {_describe(data)}, expected an object")
    names = [f.name for f in fields]
    for key in data:
        if key not in names:
            raise refuse(f"unknown field `{key}`, expected one of "
                         + ", ".join(f"`{n}`" for n in names))
    parsed: dict[str, Any] = {}
    for field in fields:
        value = data.get(field.name)
        if value is None and field.required:
            if field.name in data:
                raise refuse(f"invalid type: null, expected a value (field `{field.name}`)")
            raise refuse(f"missing field `{field.name}`")
        parsed[field.name] = None if value is None else _value(field, value)
    return parsed

"""The adapter protocol v1: message envelopes, operations, capabilities and the memory tools'
arguments and outputs as JSON Schemas."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any, cast

import fastjsonschema
from fastjsonschema import JsonSchemaException
from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator

from memconform.resources import protocol_schema_dir


class ProtocolViolation(Exception):
    """A message that does not match the v1 schemas."""


@cache
def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((protocol_schema_dir() / name).read_text(encoding="utf-8"))
    return data


@cache
def _schema(kind: str, op: str | None = None) -> dict[str, Any]:
    if op is None:
        return {**_load("envelope.json"), "$ref": f"#/$defs/{kind}"}
    ops = _load("ops.json")
    if op not in ops["ops"]:
        raise ProtocolViolation(f"unknown operation {op!r}")
    schema = {**ops, **ops["ops"][op][kind]}
    schema.pop("ops", None)
    return schema


@cache
def _validator(kind: str, op: str | None = None) -> Draft202012Validator:
    return Draft202012Validator(_schema(kind, op))


@cache
def _compiled(kind: str, op: str | None = None) -> Callable[[Any], Any]:
    """The same schema compiled to Python by fastjsonschema: about ten times faster on the
    valid messages that are nearly all of a run (tests/test_protocol_fast.py holds it to
    jsonschema's verdicts)."""
    draft7 = {**_draft7(_schema(kind, op)), "$schema": "http://json-schema.org/draft-07/schema#"}
    compiled: Callable[[Any], Any] = fastjsonschema.compile(draft7)
    return compiled


def _draft7(node: Any) -> Any:
    """A 2020-12 schema in draft 7's words (fastjsonschema knows drafts up to 7): a tuple's
    `prefixItems` becomes an `items` list, and its `items` the `additionalItems`."""
    if isinstance(node, list):
        return [_draft7(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _draft7(v) for k, v in node.items()}
    if "prefixItems" in out:
        out["items"], rest = out.pop("prefixItems"), out.pop("items", None)
        if rest is not None:
            out["additionalItems"] = rest
    return out


def capabilities() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = _load("capabilities.json")
    return data


def _check(kind: str, op: str | None, value: Any, what: str) -> None:
    """Accept what the compiled schema accepts; otherwise jsonschema decides and words the
    refusal."""
    try:
        _compiled(kind, op)(value)
        return
    except JsonSchemaException:
        pass
    error = next(iter(_validator(kind, op).iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise ProtocolViolation(f"{what}: {error.message} at {where}")


def validate_request(message: dict[str, Any], *, known_op: bool = True) -> None:
    """The envelope, and unless `known_op` is False the operation's arguments."""
    _check("request", None, message, "request")
    if known_op:
        _check("args", message["op"], message["args"], f"{message['op']} args")


def validate_response(op: str, message: Any, *, known_op: bool = True) -> None:
    """The envelope, and unless `known_op` is False an `ok` answer's result."""
    _check("response", None, message, f"{op} response")
    if message["ok"] and known_op:
        _check("result", op, message["result"], f"{op} result")


def _strict_integer(_checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Parsed JSON keeps 1.0 a float: a count written with a fraction is not an integer here.
_extend = cast(Any, validators.extend)  # untyped in the stubs
_ToolValidator: type[Validator] = _extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer))
MESSAGE_LIMIT = 200


@cache
def _tool_validator(name: str, part: str) -> Validator:
    tools = _load("tools.json")
    if name not in tools["tools"]:
        raise ProtocolViolation(f"unknown memory tool {name!r}")
    schema = {**tools, **tools["tools"][name][part]}
    schema.pop("tools", None)
    validator: Validator = _ToolValidator(schema)
    return validator


def _check_tool(name: str, part: str, value: Any) -> None:
    error = next(iter(_tool_validator(name, part).iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        message = " ".join(error.message.splitlines())
        if len(message) > MESSAGE_LIMIT:
            message = message[:MESSAGE_LIMIT - 1] + "…"
        raise ProtocolViolation(f"memory tool {name} {part}: {message} at {where}")


def validate_tool_arguments(name: str, value: Any) -> None:
    """Refuse parsed JSON arguments of memory tool `name` that strict parsing would refuse
    (tools.json `arguments`)."""
    _check_tool(name, "arguments", value)


def validate_tool_output(name: str, value: Any) -> None:
    """Refuse an `output` object of memory tool `name` that tools.json does not allow."""
    _check_tool(name, "output", value)

"""The adapter protocol v1: message envelopes, operations and capabilities as JSON Schemas."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from memconform.resources import protocol_schema_dir


class ProtocolViolation(Exception):
    """A message that does not match the v1 schemas."""


@cache
def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((protocol_schema_dir() / name).read_text(encoding="utf-8"))
    return data


@cache
def _validator(kind: str, op: str | None = None) -> Draft202012Validator:
    if op is None:
        envelope = _load("envelope.json")
        schema = {**envelope, "$ref": f"#/$defs/{kind}"}
    else:
        ops = _load("ops.json")
        if op not in ops["ops"]:
            raise ProtocolViolation(f"unknown operation {op!r}")
        schema = {**ops, **ops["ops"][op][kind]}
        schema.pop("ops", None)
    return Draft202012Validator(schema)


def capabilities() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = _load("capabilities.json")
    return data


def _check(validator: Draft202012Validator, value: Any, what: str) -> None:
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise ProtocolViolation(f"{what}: {error.message} at {where}")


def validate_request(message: dict[str, Any]) -> None:
    _check(_validator("request"), message, "request")
    _check(_validator("args", message["op"]), message["args"], f"{message['op']} args")


def validate_response(op: str, message: Any) -> None:
    _check(_validator("response"), message, f"{op} response")
    if message["ok"]:
        _check(_validator("result", op), message["result"], f"{op} result")

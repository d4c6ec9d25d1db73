"""JSON Schemas of what memconform writes for machines: `report.jsonl` lines, `summary
--format json` and `compare --format json` (they refer to each other by file name)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from memconform.resources import fixture_json

_DIR = Path(__file__).resolve().parent
NAMES = ("report", "summary", "compare")


def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return data


@cache
def _registry() -> Registry[Any]:
    resources = [(s["$id"], Resource.from_contents(s)) for s in map(_schema, NAMES)]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    if name not in NAMES:
        raise ValueError(f"no schema named {name!r}")
    schema = _schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())


def problems(name: str, instance: Any) -> list[str]:
    """Where `instance` breaks the schema, one line each (empty when it conforms)."""
    return _lines(validator(name), instance)


def _lines(checker: Draft202012Validator, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
            for e in sorted(checker.iter_errors(instance), key=lambda e: list(map(str, e.path)))]


@cache
def _request_validator() -> Draft202012Validator:
    schema = fixture_json("model", "responses-request.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def request_problems(body: Any) -> list[str]:
    """Where a model request body breaks fixtures/model/responses-request.schema.json."""
    return _lines(_request_validator(), body)

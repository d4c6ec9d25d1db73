"""The compiled protocol schemas (fastjsonschema, the fast path) give jsonschema's verdict on
generated messages, valid and invalid, of every envelope and operation part: the fast path
may only ever save time, never let through a message jsonschema refuses."""

from __future__ import annotations

import random
from typing import Any

import fastjsonschema
import pytest
from fastjsonschema import JsonSchemaException

from memconform import protocol

PARTS = [("request", None), ("response", None)] + [
    (kind, op) for op, spec in sorted(protocol._load("ops.json")["ops"].items())
    for kind in ("args", "result") if kind in spec]
PER_PART = 1000
ODD: tuple[Any, ...] = (None, True, False, 0, -1, 1.0, 1.5, "", "x", [], {}, 2**63, "2026-01-01")


class Generator:
    """Values shaped by a schema (its types, properties, items, bounds, enums, branches),
    each part off the schema now and then: a dropped required key, an unknown key, a wrong
    type, a bound plus or minus one."""

    def __init__(self, root: dict[str, Any], rng: random.Random) -> None:
        self.root, self.rng = root, rng

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.root
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = {**{k: v for k, v in node.items() if k != "$ref"}, **target}
        return node

    def value(self, node: Any, depth: int = 0) -> Any:
        rng = self.rng
        if not isinstance(node, dict) or depth > 6 or rng.random() < 0.04:
            return rng.choice(ODD)
        node = self.resolve(node)
        for key in ("oneOf", "anyOf", "allOf"):
            if key in node and rng.random() < 0.8:
                branch = self.resolve(rng.choice(node[key]))
                node = {**{k: v for k, v in node.items() if k != key}, **branch}
        if "then" in node and rng.random() < 0.5:
            node = {**node, **self.resolve(node["then"])}
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return rng.choice(node["enum"])
        kind = node.get("type", rng.choice(("object", "string", "integer")))
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind == "object":
            return self.obj(node, depth)
        if kind == "array":
            return self.array(node, depth)
        if kind in ("integer", "number"):
            low, high = node.get("minimum", 0), node.get("maximum", 10**6)
            return rng.choice((low, low - 1, low + 1, high, high + 1, rng.randint(low, high),
                               float(low)))
        if kind == "string":
            size = node.get("minLength", 0)
            return rng.choice(("", "x" * max(size - 1, 0), "y" * (size + 1), "t\\u00e9xt"))
        if kind == "boolean":
            return rng.random() < 0.5
        return None

    def obj(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        rng = self.rng
        props = node.get("properties", {})
        required = set(node.get("required", ()))
        out = {name: self.value(sub, depth + 1) for name, sub in props.items()
               if name in required or rng.random() < 0.5}
        if required and rng.random() < 0.1:
            out.pop(rng.choice(sorted(required)), None)
        if rng.random() < 0.1:
            out["unknown_key"] = 1
        return out

    def array(self, node: dict[str, Any], depth: int) -> list[Any]:
        prefix = node.get("prefixItems", [])
        out = [self.value(sub, depth + 1) for sub in prefix]
        if prefix and self.rng.random() < 0.3:
            at = self.rng.randrange(len(out))
            out = out[:-1] if self.rng.random() < 0.3 else [*out, "extra"] \
                if self.rng.random() < 0.5 else [*out[:at], self.rng.choice(ODD), *out[at + 1:]]
        items = node.get("items")
        if items is not None:
            out += [self.value(items, depth + 1) for _ in range(self.rng.randint(0, 3))]
        return out


def _fast_accepts(kind: str, op: str | None, value: Any) -> bool:
    try:
        protocol._compiled(kind, op)(value)
    except JsonSchemaException:
        return False
    return True


@pytest.mark.parametrize(("kind", "op"), PARTS, ids=[f"{op or 'envelope'}-{kind}"
                                                     for kind, op in PARTS])
def test_compiled_schema_agrees_with_jsonschema(kind: str, op: str | None) -> None:
    schema = protocol._schema(kind, op)
    generator = Generator(schema, random.Random(f"{op}-{kind}"))
    verdicts = []
    for _ in range(PER_PART):
        value = generator.value(schema)
        expected = protocol._validator(kind, op).is_valid(value)
        assert _fast_accepts(kind, op, value) is expected, \
            f"fastjsonschema and jsonschema disagree on {value!r} (jsonschema: {expected})"
        verdicts.append(expected)
    assert False in verdicts, "no generated value was invalid: the comparison shows nothing"


def test_the_generated_values_are_often_valid() -> None:
    """Across all parts, enough generated values are valid for the agreement to mean
    something on the accepting side too."""
    valid = total = 0
    for kind, op in PARTS:
        schema = protocol._schema(kind, op)
        generator = Generator(schema, random.Random(f"{op}-{kind}"))
        for _ in range(100):
            valid += protocol._validator(kind, op).is_valid(generator.value(schema))
            total += 1
    assert valid >= total // 5, f"only {valid} of {total} generated values were valid"


def test_a_tuple_keeps_its_positions_in_draft_7() -> None:
    """`prefixItems` (2020-12) survives the translation: a wrong type in a position or a
    missing element is refused by the compiled form too."""
    tuple_schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                    "minItems": 2, "maxItems": 2}
    compiled = fastjsonschema.compile({**protocol._draft7(tuple_schema),
                                       "$schema": "http://json-schema.org/draft-07/schema#"})
    compiled(["a", 1])
    for wrong in ([1, "a"], ["a", "b"], ["a"]):
        with pytest.raises(JsonSchemaException):
            compiled(wrong)


def test_a_refusal_is_worded_by_jsonschema() -> None:
    with pytest.raises(protocol.ProtocolViolation, match=r"request: .*'seq'.* at \(top\)"):
        protocol.validate_request({"op": "startup", "args": {}})

"""The memory tools' argument and output schemas (protocol/v1/tools.json) against the fixture
cases, the reference's answers and the outputs recorded from the Codex 0.144.6 binary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from memconform import protocol
from memconform.home import CodexHome
from memconform.protocol import ProtocolViolation, validate_tool_arguments, validate_tool_output
from memconform.resources import fixture_json
from memconform.trees import Tree, case_tree, text_of
from memref.adapter import ReferenceAdapter

FIXTURE = fixture_json("read", "tools.json")
EVIDENCE = Path(__file__).resolve().parent.parent / "conformance" / "evidence"
RECORDED = json.loads((EVIDENCE / "codex-0.144.6-memory-tools.json").read_text("utf-8"))
TOOLS = ["add_ad_hoc_note", "list", "read", "search"]
# Cases whose arguments strict parsing refuses (TOOL-GEN-03), before any tool runs.
PARSE_REFUSED = {
    "search-legacy-single-query-refused", "search-unknown-match-mode-refused",
    "note-note-field-required", "args-unknown-field-refused", "args-missing-required-field",
    "args-blank-arguments-still-need-required-fields", "args-not-json-refused",
    "args-not-an-object-refused", "args-string-for-a-number-refused",
    "args-string-for-a-sequence-refused", "args-number-in-a-sequence-refused",
    "args-null-for-a-required-field-refused", "args-number-not-an-object-refused",
    "args-negative-number-refused", "args-fraction-refused", "args-number-for-a-string-refused",
    "args-string-for-a-boolean-refused", "args-integral-float-count-refused",
    "args-count-over-u64-refused", "args-match-mode-not-a-map-refused",
    "args-match-mode-type-missing-refused", "args-window-line-count-missing-refused",
    "args-match-mode-type-not-a-string-refused", "args-window-line-count-not-a-count-refused"}
# The binary reads a JSON array of one element per field positionally; the contract does not.
POSITIONAL = {"probe-positional-array-read", "probe-positional-array-list"}
NOT_OFFERED = {"probe-tool-not-offered", "probe-unknown-tool-name"}


def expand(value: Any) -> Any:
    """A fixture or recorded value with its `{"parts": ...}` texts expanded."""
    if isinstance(value, dict):
        if set(value) == {"parts"}:
            return text_of(value)
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


def parsed(arguments: Any) -> tuple[bool, Any]:
    """(is JSON, value) of a call's arguments: a fixture object, or raw text (blank is {})."""
    if not isinstance(arguments, str):
        return True, arguments
    if not arguments.strip():
        return True, {}
    try:
        return True, json.loads(arguments)
    except ValueError:
        return False, None


def fixture_calls() -> list[tuple[str, dict[str, Any]]]:
    return [(f"{case['id']}#{n}", call) for case in FIXTURE["cases"]
            for n, call in enumerate(case["calls"], 1)]


CALLS = fixture_calls()


def violation(call: Any) -> str:
    with pytest.raises(ProtocolViolation) as raised:
        call()
    return str(raised.value)


@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_fixture_outputs_validate(label: str, call: dict[str, Any]) -> None:
    if "output" in call:
        validate_tool_output(call["name"], expand(call["output"]))


@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_fixture_arguments_validate_unless_parsing_refuses_them(
        label: str, call: dict[str, Any]) -> None:
    refused = label.split("#")[0] in PARSE_REFUSED
    if refused:
        assert "output" not in call, "a parse refusal must expect an error"
    is_json, value = parsed(call["arguments"])
    if not is_json:
        assert refused
        return
    if refused:
        violation(lambda: validate_tool_arguments(call["name"], value))
    else:
        validate_tool_arguments(call["name"], value)


def test_every_tool_has_both_schemas() -> None:
    schemas = json.loads((Path(protocol.__file__).parent / "v1" / "tools.json")
                         .read_text("utf-8"))
    Draft202012Validator.check_schema(schemas)
    assert sorted(schemas["tools"]) == TOOLS
    assert all(set(schemas["tools"][t]) == {"arguments", "output"} for t in TOOLS)


def test_argument_schemas_match_the_binary_definitions() -> None:
    schemas = json.loads((Path(protocol.__file__).parent / "v1" / "tools.json")
                         .read_text("utf-8"))["tools"]
    offered = {t["name"]: t["parameters"] for t in RECORDED["offered"]}
    assert list(offered) == TOOLS
    for name, params in offered.items():
        ours = schemas[name]["arguments"]
        assert sorted(ours["properties"]) == sorted(params["properties"]), name
        assert sorted(ours["required"]) == sorted(params.get("required", [])), name
        assert ours["additionalProperties"] is params["additionalProperties"] is False


RECORDS = [(r["case"], r) for r in RECORDED["calls"]]


@pytest.mark.parametrize(("case", "record"), RECORDS, ids=[f"{c}-{i}" for i, (c, _) in
                                                          enumerate(RECORDS)])
def test_binary_results_agree_with_the_schemas(case: str, record: dict[str, Any]) -> None:
    """Every output the binary gave validates, and so do the arguments behind it; arguments
    the schema refuses were refused by the binary too."""
    result = expand(record["result"])
    if case in NOT_OFFERED:
        assert "error" in result
        return
    is_json, value = parsed(record["arguments"])
    if "output" in result:
        validate_tool_output(record["name"], result["output"])
        if case in POSITIONAL:
            assert "is not of type 'object' at (top)" in violation(
                lambda: validate_tool_arguments(record["name"], value))
        else:
            validate_tool_arguments(record["name"], value)
        return
    if not is_json:
        return
    try:
        validate_tool_arguments(record["name"], value)
    except ProtocolViolation:
        return  # refused by both
    # accepted by the schema: the binary refused it in the tool's own checks, never in parsing
    assert not result["error"].startswith(("invalid type", "invalid number", "invalid value",
                                           "missing field", "unknown field", "unknown variant",
                                           "invalid length")), result["error"]


def reference_results(tmp_path: Path, case: dict[str, Any]) -> list[dict[str, Any]]:
    home = CodexHome(tmp_path / "codex-home", now_ms=1_780_000_000_000,
                     model_base_url="http://127.0.0.1:9/v1")
    home.write_config(memories={"dedicated_tools": True})
    tree = Tree(home.memory_root)
    tree.build(case_tree(case, FIXTURE["trees"]))
    calls = [{"name": c["name"], "arguments": tree.substitute(
        c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]))}
        for c in case["calls"]]
    answer = ReferenceAdapter().handle({"seq": 0, "op": "tools.call", "args": {
        "home": str(home.path), "calls": calls, "now_ms": None}})
    assert answer["ok"], answer
    results: list[dict[str, Any]] = answer["result"]["results"]
    return results


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["id"] for c in FIXTURE["cases"]])
def test_reference_outputs_validate(tmp_path: Path, case: dict[str, Any]) -> None:
    results = reference_results(tmp_path, case)
    for call, result in zip(case["calls"], results, strict=True):
        assert ("output" in result) == ("output" in call), result
        if "output" in result:
            validate_tool_output(call["name"], result["output"])


LISTED = {"path": None, "entries": [{"path": "MEMORY.md", "entry_type": "file"}],
          "next_cursor": None, "truncated": False}
FOUND: dict[str, Any] = {
    "queries": ["needle"], "match_mode": {"type": "any"}, "path": None, "matches": [
    {"path": "MEMORY.md", "match_line_number": 1, "content_start_line_number": 1,
     "content": "needle", "matched_queries": ["needle"]}], "next_cursor": None,
    "truncated": False}
READ = {"path": "MEMORY.md", "start_line_number": 1, "content": "needle\n", "truncated": False}
BROKEN_OUTPUTS = [
    ("list", {**LISTED, "entries": [{"path": "link", "entry_type": "symlink"}]},
     "memory tool list output: 'symlink' is not one of ['file', 'directory'] "
     "at entries/0/entry_type"),
    ("list", {k: v for k, v in LISTED.items() if k != "truncated"},
     "memory tool list output: 'truncated' is a required property at (top)"),
    ("list", {**LISTED, "entries": [{"path": ".git/config", "entry_type": "file"}]},
     "memory tool list output: '.git/config' does not match '^[^./][^/]*(/[^./][^/]*)*$' "
     "at entries/0/path"),
    ("list", {**LISTED, "next_cursor": "1"}, "memory tool list output: True was expected "
     "at truncated"),
    ("list", {**LISTED, "next_cursor": 1}, "memory tool list output: 1 is not of type "
     "'string', 'null' at next_cursor"),
    ("read", {**READ, "start_line_number": 0}, "memory tool read output: 0 is less than the "
     "minimum of 1 at start_line_number"),
    ("read", {**READ, "lines": 1}, "memory tool read output: Additional properties are not "
     "allowed ('lines' was unexpected) at (top)"),
    ("search", {**FOUND, "match_mode": {"type": "any", "line_count": 2}},
     "memory tool search output: {'type': 'any', 'line_count': 2} has too many properties "
     "at match_mode"),
    ("search", {**FOUND, "queries": [" needle"]}, "memory tool search output: ' needle' does "
     "not match '^\\\\S([\\\\s\\\\S]*\\\\S)?$' at queries/0"),
    ("search", {**FOUND, "matches": [{**FOUND["matches"][0], "matched_queries": []}]},
     "memory tool search output: [] should be non-empty at matches/0/matched_queries"),
    ("add_ad_hoc_note", {"path": "extensions/ad_hoc/notes/x.md"},
     "memory tool add_ad_hoc_note output: Additional properties are not allowed ('path' was "
     "unexpected) at (top)"),
]


@pytest.mark.parametrize(("name", "value", "message"), BROKEN_OUTPUTS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BROKEN_OUTPUTS)])
def test_broken_outputs_are_refused(name: str, value: Any, message: str) -> None:
    assert violation(lambda: validate_tool_output(name, value)) == message


BROKEN_ARGUMENTS = [
    ("read", {"path": None}, "memory tool read arguments: None is not of type 'string' at path"),
    ("read", {"path": "a", "line_offset": 1.0},
     "memory tool read arguments: 1.0 is not of type 'integer', 'null' at line_offset"),
    ("list", {"max_results": 2**64},
     "memory tool list arguments: 18446744073709551616 is greater than the maximum of "
     "18446744073709551615 at max_results"),
    ("search", {"queries": ["a"], "match_mode": {"type": "all_within_lines"}},
     "memory tool search arguments: 'line_count' is a required property at match_mode"),
    ("search", {"query": "a"}, "memory tool search arguments: Additional properties are not "
     "allowed ('query' was unexpected) at (top)"),
    ("search", {}, "memory tool search arguments: 'queries' is a required property at (top)"),
    ("add_ad_hoc_note", ["2026-05-26T13-42-08-x.md", "n"],
     "memory tool add_ad_hoc_note arguments: ['2026-05-26T13-42-08-x.md', 'n'] is not of type "
     "'object' at (top)"),
]


@pytest.mark.parametrize(("name", "value", "message"), BROKEN_ARGUMENTS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BROKEN_ARGUMENTS)])
def test_broken_arguments_are_refused(name: str, value: Any, message: str) -> None:
    assert violation(lambda: validate_tool_arguments(name, value)) == message


def test_accepted_edge_arguments() -> None:
    validate_tool_arguments("search", {"queries": ["a"], "match_mode": {"type": "any",
                                                                        "bogus": 1}})
    validate_tool_arguments("search", {"queries": [], "match_mode": None, "context_lines": 0})
    validate_tool_arguments("read", {"path": "a", "line_offset": 2**64 - 1, "max_lines": 0})
    validate_tool_arguments("list", {"path": None, "cursor": None, "max_results": None})


def test_unknown_tool_and_long_messages() -> None:
    assert violation(lambda: validate_tool_output("delete", {})) == \
        "unknown memory tool 'delete'"
    message = violation(lambda: validate_tool_output("read", {**READ, "content": None,
                                                              "path": "x" * 5000}))
    assert "\n" not in message and len(message) < 300


@pytest.mark.parametrize(("op", "args", "missing"), [
    ("stage1.finish", {"result": "succeeded", "output": {
        "raw_memory": "r", "rollout_summary": "s", "rollout_slug": None}}, "watermark"),
    ("stage1.finish", {"result": "failed"}, "reason"),
    ("phase2.finish", {"result": "succeeded", "selected": []}, "completed_watermark"),
    ("phase2.finish", {"result": "failed"}, "reason"),
])
def test_a_finish_needs_the_fields_of_its_result(op: str, args: dict[str, Any],
                                                 missing: str) -> None:
    base = {"home": "/h", "token": "t", "now_ms": 0, **args}
    if op == "stage1.finish":
        base["thread_id"] = "x"
    message = {"seq": 1, "op": op, "args": base}
    with pytest.raises(protocol.ProtocolViolation, match=f"'{missing}' is a required property"):
        protocol.validate_request(message)
    protocol.validate_request({**message, "args": {**base, missing: 1 if "mark" in missing
                                                   else "why"}})

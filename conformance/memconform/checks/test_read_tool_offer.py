"""TOOL-GEN: which memory tools a turn offers, their schemas, and the default page sizes
(through `turn.tools` and `tools.call`)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.protocol import ProtocolViolation, validate_tool_output
from memconform.registry import check
from memconform.trees import Tree
from memconform.verdicts import fail

NEEDS = ("memory.tools",)
NAMES = ["add_ad_hoc_note", "list", "read", "search"]
REQUIRED = {"add_ad_hoc_note": ["filename", "note"], "list": [], "read": ["path"],
            "search": ["queries"]}


def offered(impl: Adapter, home: CodexHome) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = impl.call("turn.tools", {"home": str(home.path)})["tools"]
    return tools


def call(impl: Adapter, home: CodexHome, name: str, args: dict[str, Any]) -> dict[str, Any]:
    results = impl.call("tools.call", {"home": str(home.path), "calls": [
        {"name": name, "arguments": json.dumps(args)}]})["results"]
    assert len(results) == 1, f"tools.call with one {name} call did not answer one result"
    return dict(results[0])


def tool_output(name: str, result: dict[str, Any], where: str) -> dict[str, Any]:
    """The `output` of a served call, valid for its tool; a refusal or an output tools.json
    does not allow is the implementation's failure."""
    if "output" not in result:
        fail(f"{where} was refused: {result.get('error')}")
    output: dict[str, Any] = result["output"]
    try:
        validate_tool_output(name, output)
    except ProtocolViolation as exc:
        fail(f"{where} answered an output the {name} tool's schema does not allow ({exc})")
    return output


@check("read.tool.offered", title="with dedicated_tools on, a turn offers add_ad_hoc_note, "
       "list, read and search in namespace memories, each with a closed argument schema",
       rules=("TOOL-GEN-01", "TOOL-GEN-02"), level="SHOULD", area="read", needs=NEEDS)
def test_offered(impl: Adapter, home: CodexHome) -> None:
    home.write_config(memories={"dedicated_tools": True})
    tools = offered(impl, home)
    assert [t["name"] for t in tools] == NAMES, "with dedicated_tools on, the turn does not " \
        "offer exactly the memory tools add_ad_hoc_note, list, read and search, in that order"
    for tool in tools:
        name = tool["name"]
        assert tool["namespace"] == "memories", f"the {name} tool is not in namespace memories"
        params = tool["parameters"]
        assert params.get("type") == "object", \
            f"the {name} tool's parameters schema is not of type object"
        assert params.get("additionalProperties") is False, \
            f"the {name} tool's parameters schema accepts unknown fields " \
            "(additionalProperties is not false)"
        assert sorted(params.get("required", [])) == sorted(REQUIRED[name]), \
            f"the {name} tool's parameters schema does not require exactly its required fields"
    note_fields = tools[0]["parameters"].get("properties") or {}
    filename = note_fields.get("filename")
    if not isinstance(filename, dict):
        fail("the add_ad_hoc_note tool's parameters schema has no filename property")
    assert filename.get("type") == "string", \
        "the add_ad_hoc_note tool's filename property is not of type string"
    assert "YYYY-MM-DDTHH-MM-SS" in str(filename.get("description", "")), \
        "the add_ad_hoc_note tool's filename description does not state the name format " \
        "YYYY-MM-DDTHH-MM-SS"
    pattern = filename.get("pattern", ".*")  # optional; when given it must admit good names
    try:
        admitted = re.fullmatch(str(pattern), "2026-05-26T13-42-08-a-note.md")
    except re.error as exc:
        fail(f"the add_ad_hoc_note tool's filename pattern is not a regular expression ({exc})")
    assert admitted, "the add_ad_hoc_note tool's filename pattern refuses the valid name " \
        "2026-05-26T13-42-08-a-note.md"
    search_fields = tools[3]["parameters"].get("properties") or {}
    assert "queries" in search_fields, \
        "the search tool's parameters schema has no queries property"
    assert "query" not in search_fields, \
        "the search tool's parameters schema still offers the single query property"


GATES = [("dedicated-tools-default-off", True, {}, "dedicated_tools is unset (off by default)"),
         ("dedicated-tools-off", True, {"dedicated_tools": False}, "dedicated_tools = false"),
         ("use-memories-off", True, {"dedicated_tools": True, "use_memories": False},
          "use_memories = false"),
         ("feature-off", False, {"dedicated_tools": True}, "the memories feature is off")]


@check("read.tool.gated", title="without the feature, use_memories or dedicated_tools no memory "
       "tool is offered and a call to one is unsupported", rules=("TOOL-GEN-01",),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize(("feature", "memories", "gate"), [g[1:] for g in GATES],
                         ids=[g[0] for g in GATES])
def test_gated(impl: Adapter, home: CodexHome, feature: bool, memories: dict[str, Any],
               gate: str) -> None:
    home.write_config(feature=feature, memories=memories)
    Tree(home.memory_root).build({"files": {"MEMORY.md": "needle\n"}})
    assert [t["name"] for t in offered(impl, home)] == [], \
        f"memory tools are offered though {gate}"
    result = call(impl, home, "read", {"path": "MEMORY.md"})
    assert "error" in result, \
        f"a call to the read tool was served though {gate} (it must be refused as unsupported)"


@check("read.tool.page-defaults", title="list pages hold 2,000 entries and search pages 200 "
       "matches by default, and max_results cannot raise them", rules=(
           "TOOL-LIST-04", "TOOL-SEARCH-05"), level="SHOULD", area="read", needs=NEEDS)
def test_page_defaults(impl: Adapter, home: CodexHome) -> None:
    home.write_config(memories={"dedicated_tools": True})
    Tree(home.memory_root).build({"files": {
        **{f"many/f{i:04d}.md": "" for i in range(2_001)},
        "lines.md": "needle\n" * 201}})
    for args in ({"path": "many"}, {"path": "many", "max_results": 5_000}):
        where = "list of a folder of 2,001 files" + (
            " with max_results 5000" if "max_results" in args else "")
        listed = tool_output("list", call(impl, home, "list", args), where)
        assert len(listed["entries"]) == 2_000, f"{where} did not answer a page of 2,000 entries"
        assert listed["next_cursor"] == "2000", f"{where}: next_cursor is not 2000"
        assert listed["truncated"] is True, f"{where}: the first page is not marked truncated"
    for extra in ({}, {"max_results": 1_000}):
        where = "search of a file with 201 matching lines" + (
            " with max_results 1000" if extra else "")
        found = tool_output("search", call(impl, home, "search", {
            "queries": ["needle"], "path": "lines.md", **extra}), where)
        assert len(found["matches"]) == 200, f"{where} did not answer a page of 200 matches"
        assert found["next_cursor"] == "200", f"{where}: next_cursor is not 200"

"""TOOL-GEN: which memory tools a turn offers, their schemas, and the default page sizes
(through `turn.tools` and `tools.call`)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.registry import check
from memconform.trees import Tree

NEEDS = ("memory.tools",)
NAMES = ["add_ad_hoc_note", "list", "read", "search"]
REQUIRED = {"add_ad_hoc_note": ["filename", "note"], "list": [], "read": ["path"],
            "search": ["queries"]}


def offered(impl: Adapter, home: CodexHome) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = impl.call("turn.tools", {"home": str(home.path)})["tools"]
    return tools


def call(impl: Adapter, home: CodexHome, name: str, args: dict[str, Any]) -> dict[str, Any]:
    [result] = impl.call("tools.call", {"home": str(home.path), "calls": [
        {"name": name, "arguments": json.dumps(args)}]})["results"]
    return dict(result)


@check("read.tool.offered", title="with dedicated_tools on, a turn offers add_ad_hoc_note, "
       "list, read and search in namespace memories, each with a closed argument schema",
       rules=("TOOL-GEN-01", "TOOL-GEN-02"), level="SHOULD", area="read", needs=NEEDS)
def test_offered(impl: Adapter, home: CodexHome) -> None:
    home.write_config(memories={"dedicated_tools": True})
    tools = offered(impl, home)
    assert [t["name"] for t in tools] == NAMES
    for tool in tools:
        assert tool["namespace"] == "memories"
        params = tool["parameters"]
        assert params.get("type") == "object", f"{tool['name']}: parameters not an object"
        assert params.get("additionalProperties") is False, f"{tool['name']} accepts any field"
        assert sorted(params.get("required", [])) == sorted(REQUIRED[tool["name"]]), \
            f"{tool['name']}: required fields"
    filename = tools[0]["parameters"]["properties"]["filename"]
    assert filename["type"] == "string"
    assert "YYYY-MM-DDTHH-MM-SS" in filename.get("description", ""), \
        "the filename schema does not state the name format"
    pattern = filename.get("pattern", ".*")  # optional; when given it must admit good names
    assert re.fullmatch(pattern, "2026-05-26T13-42-08-a-note.md"), \
        "the filename pattern refuses a valid name"
    assert "queries" in tools[3]["parameters"]["properties"]
    assert "query" not in tools[3]["parameters"]["properties"]


GATES = [("dedicated-tools-default-off", True, {}),
         ("dedicated-tools-off", True, {"dedicated_tools": False}),
         ("use-memories-off", True, {"dedicated_tools": True, "use_memories": False}),
         ("feature-off", False, {"dedicated_tools": True})]


@check("read.tool.gated", title="without the feature, use_memories or dedicated_tools no memory "
       "tool is offered and a call to one is unsupported", rules=("TOOL-GEN-01",),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize(("feature", "memories"), [g[1:] for g in GATES],
                         ids=[g[0] for g in GATES])
def test_gated(impl: Adapter, home: CodexHome, feature: bool, memories: dict[str, Any]) -> None:
    home.write_config(feature=feature, memories=memories)
    Tree(home.path).build({"files": {"MEMORY.md": "needle\n"}})
    assert offered(impl, home) == []
    result = call(impl, home, "read", {"path": "MEMORY.md"})
    assert "error" in result, f"a tool that is not offered ran: {result}"


@check("read.tool.page-defaults", title="list pages hold 2,000 entries and search pages 200 "
       "matches by default, and max_results cannot raise them", rules=(
           "TOOL-LIST-04", "TOOL-SEARCH-05"), level="SHOULD", area="read", needs=NEEDS)
def test_page_defaults(impl: Adapter, home: CodexHome) -> None:
    home.write_config(memories={"dedicated_tools": True})
    Tree(home.path).build({"files": {
        **{f"many/f{i:04d}.md": "" for i in range(2_001)},
        "lines.md": "needle\n" * 201}})
    for args in ({"path": "many"}, {"path": "many", "max_results": 5_000}):
        listed = call(impl, home, "list", args)["output"]
        assert len(listed["entries"]) == 2_000 and listed["next_cursor"] == "2000", args
        assert listed["truncated"] is True
    for extra in ({}, {"max_results": 1_000}):
        found = call(impl, home, "search", {"queries": ["needle"], "path": "lines.md",
                                            **extra})["output"]
        assert len(found["matches"]) == 200 and found["next_cursor"] == "200", extra

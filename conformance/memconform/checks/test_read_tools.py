"""TOOL: the dedicated memory tools, case by case (fixtures/read/tools.json, through
`tools.call`): path safety, list, read, search, ad-hoc notes and argument parsing; and first
pages at the page-size bounds of list and search."""

from __future__ import annotations

import json
import stat
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.protocol import ProtocolViolation, validate_tool_output
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.trees import Tree, case_tree, text_of
from memconform.verdicts import fail

FIXTURE = fixture_json("read", "tools.json")
NEEDS = ("memory.tools",)
TOOLS_ON = {"dedicated_tools": True}


def cases(prefix: str) -> list[dict[str, Any]]:
    return [c for c in FIXTURE["cases"] if c["id"].startswith(prefix + "-")]


def tree_spec(case: dict[str, Any]) -> dict[str, Any]:
    return case_tree(case, FIXTURE["trees"])


def expected(value: Any, tree: Tree) -> Any:
    """The expected output with parts expanded and placeholders substituted."""
    if isinstance(value, dict):
        if set(value) == {"parts"}:
            return text_of(value)
        return {k: expected(v, tree) for k, v in value.items()}
    if isinstance(value, list):
        return [expected(v, tree) for v in value]
    return tree.substitute(value) if isinstance(value, str) else value


def run_case(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    home.write_config(memories=TOOLS_ON)
    tree = Tree(home.memory_root)
    tree.build(tree_spec(case))
    outside_before = tree.outside_files()
    calls = [{"name": c["name"], "arguments": tree.substitute(
        c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]))}
        for c in case["calls"]]
    results = impl.call("tools.call", {"home": str(home.path), "calls": calls})["results"]
    assert len(results) == len(calls), \
        f"tools.call with {len(calls)} calls did not answer one result per call"
    for number, (want, got) in enumerate(zip(case["calls"], results, strict=True), 1):
        where = f"call {number} ({want['name']} {calls[number - 1]['arguments']})"
        if "output" in want:
            if "output" not in got:
                fail(f"{where} was refused: {got.get('error')}")
            try:
                validate_tool_output(want["name"], got["output"])
            except ProtocolViolation as exc:
                fail(f"{where} answered an output the {want['name']} tool's schema does not "
                     f"allow ({exc})")
            assert got["output"] == expected(want["output"], tree), \
                f"{where} did not answer the expected output"
            continue
        assert "error" in got, f"{where} was served, but must be refused"
        if "error" in want:
            assert got["error"] == tree.substitute(want["error"]), \
                f"{where} was refused with another message"
        for part in want.get("error_contains", []):
            assert part in got["error"], f"{where}: the refusal does not mention {part!r}"
    if "files_after" in case:
        assert tree.extension_files() == case["files_after"], \
            "the files under extensions/ after the calls are not the expected ones"
    assert tree.outside_files() == case.get("outside_after", outside_before), \
        "the calls changed the folder outside the memory root"


def tool_check(prefix: str, title: str, rules: tuple[str, ...]) -> Any:
    selected = cases(prefix)

    @check(f"read.tool.{prefix}", title=title, rules=rules, level="SHOULD", area="read",
           needs=NEEDS)
    @pytest.mark.parametrize("case", selected, ids=[c["id"][len(prefix) + 1:] for c in selected])
    def test(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
        run_case(impl, home, case)

    return test


test_path = tool_check("path", "a tool's path stays inside the memory root: parents, absolute "
                       "and drive paths, hidden components, symlinks at any depth and walks "
                       "through files are refused, each with its own message",
                       ("TOOL-PATH-01", "TOOL-PATH-02", "TOOL-PATH-03", "TOOL-PATH-04",
                        "TOOL-PATH-05"))
test_list = tool_check("list", "list shows the visible entries directly under a path, in byte "
                       "order, paginated by cursor", ("TOOL-LIST-01", "TOOL-LIST-02",
                                                      "TOOL-LIST-03", "TOOL-LIST-04"))
test_read = tool_check("read", "read returns a file from a 1-based line for at most some lines, "
                       "capped at 20,000 tokens", ("TOOL-READ-01", "TOOL-READ-02",
                                                   "TOOL-READ-03", "TOOL-READ-04"))
test_search = tool_check("search", "search matches substrings by any, same-line or windowed "
                         "mode, with case and punctuation options, in path order",
                         ("TOOL-SEARCH-01", "TOOL-SEARCH-02", "TOOL-SEARCH-03",
                          "TOOL-SEARCH-04", "TOOL-SEARCH-05"))
test_note = tool_check("note", "an ad-hoc note is a new file with a strict name under "
                       "extensions/ad_hoc/notes/, never overwriting anything",
                       ("TOOL-NOTE-01", "TOOL-NOTE-02", "TOOL-NOTE-03"))
test_args = tool_check("args", "tool arguments are parsed strictly: unknown and missing fields "
                       "and wrong types are refused", ("TOOL-GEN-03",))


# (id, tool, items in the target, max_results or None, page length, next_cursor)
PAGE_BOUNDS = [
    ("list-exactly-2000-entries", "list", 2_000, None, 2_000, None),
    ("list-max-results-1999", "list", 2_000, 1_999, 1_999, "1999"),
    ("list-max-results-2000", "list", 2_001, 2_000, 2_000, "2000"),
    ("list-max-results-2001", "list", 2_001, 2_001, 2_000, "2000"),
    ("search-exactly-200-matches", "search", 200, None, 200, None),
    ("search-max-results-200", "search", 201, 200, 200, "200"),
    ("search-max-results-201", "search", 201, 201, 200, "200"),
]


@check("read.tool.page-bounds", title="a first page at the page-size bounds: exactly 2,000 "
       "entries or 200 matches fit one page, and max_results around the cap is clamped to it",
       rules=("TOOL-LIST-04", "TOOL-SEARCH-05"), level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize(("tool", "count", "max_results", "length", "next_cursor"),
                         [b[1:] for b in PAGE_BOUNDS], ids=[b[0] for b in PAGE_BOUNDS])
def test_page_bounds(impl: Adapter, home: CodexHome, tool: str, count: int,
                     max_results: int | None, length: int, next_cursor: str | None) -> None:
    """A folder of `count` files for list, a file of `count` matching lines for search; the
    first page must hold exactly the first `length` items in order."""
    home.write_config(memories=TOOLS_ON)
    if tool == "list":
        files = {f"many/f{i:04d}.md": "" for i in range(count)}
        args: dict[str, Any] = {"path": "many"}
        what = f"list of a folder of {count:,} files"
    else:
        files = {"lines.md": "needle\n" * count}
        args = {"queries": ["needle"], "path": "lines.md"}
        what = f"search of a file with {count:,} matching lines"
    if max_results is not None:
        args["max_results"] = max_results
        what += f" with max_results {max_results}"
    Tree(home.memory_root).build({"files": files})
    result = impl.call("tools.call", {"home": str(home.path), "calls": [
        {"name": tool, "arguments": json.dumps(args)}]})["results"]
    assert len(result) == 1, f"tools.call with one {tool} call did not answer one result"
    if "output" not in result[0]:
        fail(f"{what} was refused: {result[0].get('error')}")
    output = result[0]["output"]
    try:
        validate_tool_output(tool, output)
    except ProtocolViolation as exc:
        fail(f"{what} answered an output the {tool} tool's schema does not allow ({exc})")
    shown: list[Any]
    want: list[Any]
    if tool == "list":
        shown = [e["path"] for e in output["entries"]]
        want = [f"many/f{i:04d}.md" for i in range(length)]
    else:
        shown = [m["match_line_number"] for m in output["matches"]]
        want = list(range(1, length + 1))
    assert len(shown) == length, f"{what} did not answer a first page of {length:,} items"
    assert shown == want, f"{what} did not answer the first {length:,} items in order"
    assert output["next_cursor"] == next_cursor, \
        f"{what}: next_cursor is not {json.dumps(next_cursor)}"
    assert output["truncated"] is (next_cursor is not None), \
        f"{what}: truncated does not say whether items remain after the page"


@check("read.tool.note-mode", title="an ad-hoc note is a plain file nobody may execute",
       rules="TOOL-NOTE-01", level="SHOULD", area="read", needs=NEEDS)
def test_note_mode(impl: Adapter, home: CodexHome) -> None:
    home.write_config(memories=TOOLS_ON)
    name = "2026-05-26T13-42-08-mode.md"
    call = {"name": "add_ad_hoc_note", "arguments": json.dumps({"filename": name, "note": "n"})}
    [got] = impl.call("tools.call", {"home": str(home.path), "calls": [call]})["results"]
    if "output" not in got:
        fail(f"the note {name} was refused: {got.get('error')}")
    note = home.memory_root.joinpath("extensions", "ad_hoc", "notes", name)
    mode = note.lstat().st_mode
    assert stat.S_ISREG(mode), f"the note {name} is not a regular file"
    assert mode & 0o111 == 0, \
        f"the note {name} may be executed (mode {stat.S_IMODE(mode):o}): a note is text"
    assert mode & 0o600 == 0o600, \
        f"the note {name} is not readable and writable by its owner (mode {stat.S_IMODE(mode):o})"

"""CITE, STRIP, TID: what one assistant message's memory citations hide and name
(fixtures/read/citations.json, through `citations.parse`)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.registry import check
from memconform.resources import fixture_json

CASES = fixture_json("read", "citations.json")["cases"]
NEEDS = ("citations.parse",)


def parse(impl: Adapter, text: str) -> dict[str, Any]:
    result: dict[str, Any] = impl.call("citations.parse", {"text": text})
    return result


def selected(prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    return [c for c in CASES if c["id"].startswith(prefixes)]


ENTRY_CASES = selected(("entry-", "entries-", "crlf-", "vertical-"))
ID_CASES = [c for c in CASES if c not in ENTRY_CASES]


@check("read.cite.entries", title="citation entry lines are parsed by Codex's split rules; "
       "malformed lines are dropped silently", rules=("CITE-01", "CITE-02", "CITE-03"),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize("case", ENTRY_CASES, ids=[c["id"] for c in ENTRY_CASES])
def test_entries(impl: Adapter, case: dict[str, Any]) -> None:
    got = parse(impl, case["text"])
    assert got["citation"] == case["citation"]
    assert got["visible_text"] == case["visible"]


@check("read.cite.blocks", title="citation blocks are hidden from the visible text and their "
       "ids collected, deduplicated and validated", rules=("STRIP-01", "STRIP-02", "CITE-05",
                                                           "CITE-06", "TID-01"),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize("case", ID_CASES, ids=[c["id"] for c in ID_CASES])
def test_blocks(impl: Adapter, case: dict[str, Any]) -> None:
    got = parse(impl, case["text"])
    assert got["visible_text"] == case["visible"], "wrong visible text"
    assert got["citation"] == case["citation"], "wrong parsed citation"
    assert got["thread_ids"] == case["thread_ids"], "wrong cited thread ids"

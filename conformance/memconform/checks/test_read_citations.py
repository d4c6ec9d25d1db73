"""CITE, STRIP, TID: what one assistant message's memory citations hide and name
(fixtures/read/citations.json, through `citations.parse`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.clock import HarnessClock
from memconform.home import CodexHome
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
CONTROL = next(c for c in CASES if c["id"] == "basic-block")
VISIBLE = "the visible text is not the message with its citation blocks removed"


def untouched(case: dict[str, Any]) -> bool:
    """A case whose message holds no citation: leaving it alone is the right answer."""
    return case["visible"] == case["text"] and case["citation"] is None \
        and not case["thread_ids"]


CONTROL_SAYS = "(control: a message with one plain citation block), so leaving the case's " \
    "message alone proves nothing"


@check("read.cite.entries", title="citation entry lines are parsed by Codex's split rules; "
       "malformed lines are dropped silently", rules=("CITE-01", "CITE-02", "CITE-03"),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize("case", ENTRY_CASES, ids=[c["id"] for c in ENTRY_CASES])
def test_entries(impl: Adapter, case: dict[str, Any]) -> None:
    got = parse(impl, case["text"])
    assert got["citation"] == case["citation"], \
        "the parsed citation entries are not what Codex's line split rules give"
    assert got["visible_text"] == case["visible"], VISIBLE


@check("read.cite.blocks", title="citation blocks are hidden from the visible text and their "
       "ids collected, deduplicated and validated", rules=("STRIP-01", "STRIP-02", "CITE-05",
                                                           "CITE-06", "TID-01"),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize("case", ID_CASES, ids=[c["id"] for c in ID_CASES])
def test_blocks(impl: Adapter, case: dict[str, Any]) -> None:
    got = parse(impl, case["text"])
    assert got["visible_text"] == case["visible"], VISIBLE
    assert got["citation"] == case["citation"], "the parsed citation is not the message's first " \
        "citation entries and rollout ids"
    assert got["thread_ids"] == case["thread_ids"], \
        "the cited thread ids are not the valid ids of the citation, deduplicated in order"
    if untouched(case):
        control = parse(impl, CONTROL["text"])
        assert control["visible_text"] == CONTROL["visible"], \
            f"citations.parse does not hide a citation block {CONTROL_SAYS}"


@check("read.cite.turn", title="every citation case as a completed assistant message: the user "
       "sees the visible text and each cited id with a stored memory gets its uses",
       rules=("STRIP-01", "STRIP-02", "CITE-05", "CITE-06", "TID-01", "TID-02", "USAGE-03"),
       level="SHOULD", area="read", needs=("turn.message",))
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_turn(impl: Adapter, home: CodexHome, clock: HarnessClock,
              case: dict[str, Any]) -> None:
    """The same cases end to end: a memory is stored under every id the case cites (and one
    that nothing cites), then the message is handled as a turn's answer."""
    uses = Counter(case["thread_ids"])
    bystander = "00000000-0000-4000-8000-0000000000b5"
    for thread_id in [*uses, bystander]:
        home.add_stage1_output(thread_id, raw_memory="- m", rollout_summary="s",
                               source_updated_at=clock.now - 3600)
    got = impl.call("turn.message", {"home": str(home.path), "text": case["text"],
                                     "now_ms": clock.request_now(), "seed": 1})
    assert got["visible_text"] == case["visible"], VISIBLE
    if "citation" in got:
        assert got["citation"] == case["citation"], "the parsed citation is not the message's " \
            "first citation entries and rollout ids"
    rows = {r["thread_id"]: r["usage_count"] for r in home.query(
        home.memories_db, "SELECT thread_id, usage_count FROM stage1_outputs")}
    assert rows == {**uses, bystander: None}, "the stored memories' usage_count after the " \
        "message is not one use per cited id (thread id: usage_count)"
    assert got["usage_updates"] == sum(uses.values()), \
        "turn.message does not report one usage update per cited id with a stored memory"
    if untouched(case):
        control = impl.call("turn.message", {"home": str(home.path), "text": CONTROL["text"],
                                             "now_ms": clock.request_now(), "seed": 1})
        assert control["visible_text"] == CONTROL["visible"], \
            f"turn.message does not hide a citation block {CONTROL_SAYS}"


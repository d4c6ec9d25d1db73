"""USAGE: a completed assistant message's citation counts the cited memories
(fixtures/read/usage.json, through `turn.message`), and that feeds the next selection."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks.consolidation import (
    RAW,
    agent_finishes,
    configure,
    raw_threads,
    seed_memory,
)
from memconform.checks.stage1 import assert_now
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail, only

CASES = fixture_json("read", "usage.json")["cases"]
NEEDS = ("turn.message",)


def message(ids: list[str]) -> str:
    body = "".join(f"{i}\n" for i in ids)
    return ("Here is the answer.\n<oai-mem-citation>\n<citation_entries>\n"
            "MEMORY.md:1-2|note=[used]\n</citation_entries>\n"
            f"<rollout_ids>\n{body}</rollout_ids>\n</oai-mem-citation>")


def send(impl: Adapter, home: CodexHome, clock: HarnessClock, text: str) -> dict[str, Any]:
    result: dict[str, Any] = impl.call("turn.message", {
        "home": str(home.path), "text": text, "now_ms": clock.request_now(), "seed": 1})
    return result


def spell(raw: str, ids: dict[str, str]) -> str:
    for label, tid in ids.items():
        raw = raw.replace(f"{{{label}-simple}}", tid.replace("-", ""))
        raw = raw.replace(f"{{{label.upper()}}}", tid.upper()).replace(f"{{{label}}}", tid)
    return raw


@check("read.usage.writeback", title="each distinct cited id with a stage-1 row gets one more "
       "use and last_usage = now; others are ignored", rules=("USAGE-01", "USAGE-03",
                                                               "TID-02"),
       level="SHOULD", area="read", needs=NEEDS)
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_writeback(impl: Adapter, home: CodexHome, clock: HarnessClock,
                   case: dict[str, Any]) -> None:
    home.ensure_state_db()
    ids: dict[str, str] = {}
    before: dict[str, Any] = {}
    for label, spec in case["rows"].items():
        columns = {"usage_count": spec.get("usage_count")}
        if "last_used_s" in spec:
            columns["last_usage"] = clock.now + spec["last_used_s"]
        ids[label] = seed_memory(home, **columns)
        before[label] = columns.get("last_usage")
    result = send(impl, home, clock, message([spell(i, ids) for i in case["ids"]]))
    assert result["visible_text"] == "Here is the answer.\n", \
        "the message's visible text is not its answer with the citation block hidden"
    assert result["usage_updates"] == case["updates"], \
        "turn.message did not report one usage update per distinct cited id with a stage-1 row"
    rows = {r["thread_id"]: r for r in home.query(home.memories_db,
                                                  "SELECT * FROM stage1_outputs")}
    stamps = set()
    for label, tid in ids.items():
        row = rows.get(tid)
        if row is None:
            fail(f"the stage-1 row of memory {label} is gone after the message")
        cited = "cited" if label in case["used"] else "uncited"
        assert row["usage_count"] == case["after"][label], \
            f"the {cited} memory {label} does not have the expected usage_count after the message"
        if label in case["used"]:
            assert_now(row["last_usage"], clock, f"last_usage of the cited memory {label}")
            stamps.add(row["last_usage"])
        else:
            assert row["last_usage"] == before[label], \
                f"the message changed last_usage of the uncited memory {label}"
    assert len(stamps) <= 1, "one message stamped its cited rows' last_usage with different times"


@check("read.usage.floored-now", title="a message at now_ms .999 s stamps last_usage with now "
       "rounded down to whole seconds", rules=("USAGE-03", "DM-02"), level="SHOULD",
       area="read", needs=(*NEEDS, "clock.inject"))
def test_floored_now(impl: Adapter, home: CodexHome, clock: HarnessClock) -> None:
    """One cited memory, used before, and the message one millisecond before the next second."""
    cited = seed_memory(home, usage_count=1, last_usage=clock.now - 86_400)
    clock.advance(0.999)  # now_ms = E + 999; "now" is still E / 1000 (clock.now floors)
    result = send(impl, home, clock, message([cited]))
    assert result["usage_updates"] == 1, \
        "turn.message did not report one usage update for the one cited memory"
    row = only(home.query(home.memories_db, "SELECT usage_count, last_usage FROM stage1_outputs"
                          " WHERE thread_id = ?", (cited,)), "stage-1 row of the cited memory")
    assert row["usage_count"] == 2, "the cited memory (usage_count 1) does not have usage_count 2"
    assert row["last_usage"] == clock.now, "last_usage of the cited memory is not now_ms " \
        "rounded down to seconds (.999 s must not round up)"


@check("read.usage.feeds-selection", title="a cited memory outranks an uncited, newer one in "
       "the next consolidation", rules=("USAGE-04", "P2-SEL-02"), level="SHOULD",
       area="read", needs=NEEDS)
def test_feeds_selection(impl: Adapter, home: CodexHome, clock: HarnessClock, model: MockModel,
                         run_startup: StartupRunner) -> None:
    configure(home, {"max_raw_memories_for_consolidation": 1})
    old = seed_memory(home, age_s=20 * 86_400)
    seed_memory(home, age_s=2 * 3600)
    send(impl, home, clock, message([old]))
    agent_finishes(model)
    run_startup(home)
    assert raw_threads(home) == [old], f"{RAW} of the next consolidation (room for one memory) " \
        "does not hold only the cited, older memory"


@check("read.usage.saves-from-pruning", title="a recent use keeps an old memory from being "
       "pruned", rules=("USAGE-04", "RET-01"), level="SHOULD", area="read", needs=NEEDS)
def test_saves_from_pruning(impl: Adapter, home: CodexHome, clock: HarnessClock,
                            model: MockModel, run_startup: StartupRunner) -> None:
    configure(home, {"max_unused_days": 5})
    cited = seed_memory(home, age_s=10 * 86_400)
    uncited = seed_memory(home, age_s=10 * 86_400 + 60)
    send(impl, home, clock, message([cited]))
    agent_finishes(model)
    run_startup(home)
    left = {r["thread_id"] for r in home.query(home.memories_db,
                                               "SELECT thread_id FROM stage1_outputs")}
    assert cited in left, "the memory cited by the message was pruned though its use is recent"
    assert uncited not in left, \
        "the uncited memory, unused for 10 days with max_unused_days = 5, was not pruned"

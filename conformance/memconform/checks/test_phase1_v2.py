"""P1-V2: stage 1 in the v2 memory layout (Codex 0.155.0 and later): the two-field schema,
the input in bounded pieces, what an answer stores."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memconform.checks.stage1 import configure, job, output
from memconform.checks.test_phase1_jobs import assert_failed_once, extract_once
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

PIECE_MAX_BYTES = 8_900
SCHEMA_V2 = {"type": "object",
             "properties": {"rollout_summary": {"type": "string"},
                            "rollout_slug": {"type": "string"}},
             "required": ["rollout_summary", "rollout_slug"], "additionalProperties": False}
HEAD, TAIL = "HEAD-OF-THE-LONG-MESSAGE", "TAIL-OF-THE-LONG-MESSAGE"
# ~30,000 bytes of mixed one-, two- and four-byte characters between the two markers
LONG_TEXT = HEAD + " " + "café naïve 🐈 résumé words " * 1_000 + TAIL


def _user_pieces(body: Any) -> list[str]:
    """The text of each user message of a stage-1 request, in order."""
    pieces = []
    for item in body.get("input", []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("type") == "message" \
                and item.get("role") == "user":
            parts = [p.get("text", "") for p in item.get("content") or []
                     if isinstance(p, dict) and p.get("type") == "input_text"]
            if len(parts) != 1:
                fail("a user message of the stage-1 request does not have exactly one "
                     "input_text part", expected=1, actual=len(parts))
            pieces.append(parts[0])
    return pieces


@check("p1.v2.request", title="layout v2: the stage-1 request asks for the two-field schema "
       "and carries the input in user messages of at most 8,900 bytes, filled up to it",
       rules=("P1-V2-01", "P1-V2-04"), level="MUST", area="phase1", codex_since="0.155.0",
       layout="v2")
def test_request(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    home.add_thread(user_text=LONG_TEXT)
    model.on("stage1", json_output({"rollout_summary": "A long message.",
                                    "rollout_slug": "long"}))
    run_startup(home)
    sent = model.of_kind("stage1")
    if len(sent) != 1:
        fail("the thread was not extracted exactly once", expected=1, actual=len(sent))
    body = sent[0].body
    fmt = (body.get("text") or {}).get("format") or {}
    assert fmt.get("strict") is True, "the stage-1 output schema is not strict"
    assert fmt.get("schema") == SCHEMA_V2, "the stage-1 output schema is not the layout-v2 " \
        "schema (rollout_summary and rollout_slug, both strings, both required, nothing else)"
    pieces = _user_pieces(body)
    sizes = [len(p.encode("utf-8")) for p in pieces]
    assert len(pieces) >= 2, "an input of about 30,000 bytes was not cut into several user " \
        f"messages (sizes: {sizes})"
    assert max(sizes) <= PIECE_MAX_BYTES, f"a user message of the stage-1 input is longer " \
        f"than 8,900 bytes (sizes: {sizes})"
    assert min(sizes[:-1]) > PIECE_MAX_BYTES - 4, "a user message other than the last is " \
        f"not filled up to 8,900 bytes (less the rest of a character) (sizes: {sizes})"
    joined = "".join(pieces)
    assert HEAD in joined and TAIL in joined, "the pieces joined do not hold the long " \
        "message's beginning and end"
    assert "chars truncated\u2026" in joined, "the pieces joined do not show the long " \
        "message cut in the middle with a `…N chars truncated…` marker"


ROWS = fixture_json("phase1", "rows_v2.json")
LABEL_LINE = re.compile(r"^\[([a-z ]+)\]$")


def labelled_rows(text: str) -> list[tuple[str, str]]:
    """(label, the next line) for every `[label]` line of the input text."""
    lines = text.split("\n")
    return [(found.group(1), lines[i + 1] if i + 1 < len(lines) else "")
            for i, line in enumerate(lines) if (found := LABEL_LINE.match(line))]


@check("p1.v2.rows", title="layout v2: each kept item is a row labelled by who spoke (harness "
       "context, human user, other agent, assistant commentary or final, tool), in rollout "
       "order", rules=("P1-V2-05",), level="MUST", area="phase1", codex_since="0.155.0",
       layout="v2")
def test_rows(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = home.add_thread(lines=ROWS["lines"])
    model.on("stage1", json_output({"rollout_summary": "Rows.", "rollout_slug": "rows"}))
    run_startup(home)
    sent = model.of_kind("stage1")
    if len(sent) != 1:
        fail("the thread was not extracted exactly once", expected=1, actual=len(sent))
    rows = labelled_rows("".join(_user_pieces(sent[0].body)))
    markers = [marker for _, marker in ROWS["rows"]]
    # the longest marker a row holds names it (ROW-ENV-UPPER also holds ROW-ENV)
    got = [(label, max((m for m in markers if m in line), key=len))
           for label, line in rows if any(m in line for m in markers)]
    expected = [(label, marker) for label, marker in ROWS["rows"]]
    assert got == expected, f"the rows of thread {thread.id} are not labelled as Codex labels " \
        "them, in rollout order ([label] line, then the item carrying the marker)"


# case -> (the answer, sent as it is)
INVALID = {
    "slug-null": {"rollout_summary": "A session.", "rollout_slug": None},
    "slug-missing": {"rollout_summary": "A session."},
    "raw-memory-present": {"rollout_summary": "A session.", "rollout_slug": "s",
                           "raw_memory": "- a fact"},
    "summary-null": {"rollout_summary": None, "rollout_slug": "s"},
}


@check("p1.v2.invalid", title="layout v2: an answer with a null or missing slug, or with a "
       "raw_memory, fails the job", rules=("P1-V2-02", "P1-JOB-05"), level="MUST",
       area="phase1", codex_since="0.155.0", layout="v2")
@pytest.mark.parametrize("case", list(INVALID))
def test_invalid(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                 clock: HarnessClock, case: str) -> None:
    thread = extract_once(home, model, run_startup, json_output(INVALID[case], exact=True))
    assert_failed_once(home, thread, clock)


@check("p1.v2.stored", title="layout v2: a valid answer stores an empty raw_memory, the summary "
       "and the slug as given (an empty slug stays empty)", rules=("P1-V2-03",), level="MUST",
       area="phase1", codex_since="0.155.0", layout="v2")
@pytest.mark.parametrize("slug", ["topic_one", ""], ids=["slug", "empty-slug"])
def test_stored(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                slug: str) -> None:
    answer = {"rollout_summary": "# Topic\nThe user set up tox.", "rollout_slug": slug}
    thread = extract_once(home, model, run_startup, json_output(answer, exact=True))
    row = output(home, thread.id)
    if row is None:
        fail("the valid answer was not stored: no stage1_outputs row")
    assert row["raw_memory"] == "", "layout v2 stored a raw_memory other than the empty string"
    assert row["rollout_summary"] == answer["rollout_summary"], \
        "rollout_summary is not stored as the model returned it"
    assert row["rollout_slug"] == slug, "rollout_slug is not stored as the model returned it"


@check("p1.v2.forget", title="layout v2: an empty summary forgets the thread, whatever the slug",
       rules=("P1-V2-03",), level="MUST", area="phase1", codex_since="0.155.0",
       layout="v2")
@pytest.mark.parametrize("slug", ["", "kept_slug"], ids=["empty-slug", "slug"])
def test_forget(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                slug: str) -> None:
    configure(home)
    thread = home.add_thread()
    home.add_stage1_output(thread.id, raw_memory="", rollout_summary="Old summary.",
                           source_updated_at=thread.updated_at_ms // 1000 - 3600)
    model.on("stage1", json_output({"rollout_summary": "", "rollout_slug": slug}, exact=True))
    run_startup(home)
    row = job(home, thread.id)
    assert row is not None and row["status"] == "done", \
        "the empty answer did not leave the job done"
    assert output(home, thread.id) is None, \
        "the thread's stage1_outputs row was not deleted after an empty summary"


def cut_bytes(text: str, budget: int) -> str:
    """The head and tail of `text` within `budget` UTF-8 bytes, whole characters, with
    `…N chars truncated…` (N: characters removed) between them."""
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    head = data[:budget // 2].decode("utf-8", "ignore")
    tail = data[len(data) - (budget - budget // 2):].decode("utf-8", "ignore")
    return f"{head}\u2026{len(text) - len(head) - len(tail)} chars truncated\u2026{tail}"


SUMMARIES = {
    "ascii-9000": "s" * 9_000,
    "ascii-9001": "s" * 9_001,
    "multibyte-long": "Summary: " + "é🐈 résumé " * 1_200,
    # the tail's 4,500 bytes begin with the last two bytes of a `€`
    "tail-cut-inside-a-character": "s" * 5_000 + "€" * 2_000 + "x",
}


@check("p1.v2.summary-cap", title="layout v2: a stored summary is cut to 9,000 bytes, head and "
       "tail, with a `…N chars truncated…` marker", rules=("P1-V2-03",), level="MUST",
       area="phase1", codex_since="0.155.0", layout="v2")
@pytest.mark.parametrize("case", list(SUMMARIES))
def test_summary_cap(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                     case: str) -> None:
    summary = SUMMARIES[case]
    thread = extract_once(home, model, run_startup,
                          json_output({"rollout_summary": summary, "rollout_slug": "long"}))
    row = output(home, thread.id)
    if row is None:
        fail("the valid answer was not stored: no stage1_outputs row")
    assert row["rollout_summary"] == cut_bytes(summary, 9_000), \
        "the stored summary is not the answer's head and tail within 9,000 bytes around a " \
        "`…N chars truncated…` marker"


ROW_MAX_BYTES, TOOL_OUTPUT_MAX_BYTES = 9_904, 7_904
# rollout items whose rows are cut (a message over 9,904 bytes, a tool output between 7,904
# and 9,904) or are short (kept whole), as JSON escaping and multibyte characters make them
BOUNDED_ITEMS: list[dict[str, Any]] = [
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "LONG-USER " + "é€🐈x" * 1_200 + " END-USER"}]},
    {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"make\"}",
     "call_id": "call_a"},
    {"type": "function_call_output", "call_id": "call_a",
     "output": "MID-OUTPUT " + "o€" * 2_300 + " END-OUTPUT"},
    {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "SHORT café: \"quoted\"\ttab, slash / done"}]},
]


@check("p1.v2.row-bounds", title="layout v2: a row holds its item as compact JSON, cut head and "
       "tail to 9,904 bytes (a tool output to 7,904) around a `…N chars truncated…` marker",
       rules=("P1-V2-05",), level="MUST", area="phase1", codex_since="0.155.0", layout="v2")
def test_row_bounds(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    home.add_thread(lines=[{"type": "response_item", "payload": item} for item in BOUNDED_ITEMS])
    model.on("stage1", json_output({"rollout_summary": "Rows.", "rollout_slug": "rows"}))
    run_startup(home)
    sent = model.of_kind("stage1")
    if len(sent) != 1:
        fail("the thread was not extracted exactly once", expected=1, actual=len(sent))
    got = [line for _, line in labelled_rows("".join(_user_pieces(sent[0].body)))]
    expected = [cut_bytes(json.dumps(item, ensure_ascii=False, separators=(",", ":")),
                          TOOL_OUTPUT_MAX_BYTES if item["type"] == "function_call_output"
                          else ROW_MAX_BYTES) for item in BOUNDED_ITEMS]
    names = ["the long user message (cut to 9,904 bytes)", "the short function call (whole)",
             "the function call output (cut to 7,904 bytes)", "the short reply (whole)"]
    if len(got) != len(expected):
        fail("the stage-1 input does not hold one row per item", expected=len(expected),
             actual=len(got))
    for name, want, row in zip(names, expected, got, strict=True):
        assert row == want, f"the row of {name} is not the item's compact JSON cut as " \
            "P1-V2-05 says"

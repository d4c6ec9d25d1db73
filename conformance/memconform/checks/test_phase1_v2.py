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

def _stage1_pieces(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   lines: list[dict[str, Any]], top: dict[str, Any] | None = None) -> list[str]:
    configure(home, top=top)
    home.add_thread(lines=lines)
    model.on("stage1", json_output({"rollout_summary": "Pieces.", "rollout_slug": "pieces"}))
    run_startup(home)
    sent = model.of_kind("stage1")
    if len(sent) != 1:
        fail("the thread was not extracted exactly once", expected=1, actual=len(sent))
    return _user_pieces(sent[0].body)


@check("p1.v2.row-bounds", title="layout v2: a row holds its item as compact JSON, cut head and "
       "tail to 9,904 bytes (a tool output to 7,904) around a `…N chars truncated…` marker",
       rules=("P1-V2-05",), level="MUST", area="phase1", codex_since="0.155.0", layout="v2")
def test_row_bounds(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    pieces = _stage1_pieces(home, model, run_startup,
                            [{"type": "response_item", "payload": item} for item in BOUNDED_ITEMS])
    got = [line for _, line in labelled_rows("".join(pieces))]
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



# A user message of two-byte characters only: its row is cut to 9,904 bytes, and the first
# 8,900-byte cut lands in the row's tail, inside the run. One ASCII letter more in front moves
# the run by a byte against the cut, so between the two cases the cut lands once between two
# characters and once inside one, where the piece must end one byte earlier, not more.
PIECE_RUNS = {"run-at-offset-0": "", "run-at-offset-1": "a"}


@check("p1.v2.piece-cuts", title="layout v2: each user message but the last is cut at the last "
       "character boundary within 8,900 bytes (one more character would not fit)",
       rules=("P1-V2-04",), level="MUST", area="phase1", codex_since="0.155.0", layout="v2")
@pytest.mark.parametrize("case", list(PIECE_RUNS))
def test_piece_cuts(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    facts: dict[str, Any], case: str) -> None:
    text = "RUN-HEAD " + PIECE_RUNS[case] + "\u00e9" * 12_000 + " RUN-TAIL"
    pieces = _stage1_pieces(home, model, run_startup,
                            [{"type": "response_item", "payload": {
                                "type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": text}]}}])
    sizes = [len(p.encode("utf-8")) for p in pieces]
    facts["message_bytes"] = sizes
    if len(pieces) < 2:
        fail("an input of more than 10,000 bytes was not cut into several user messages",
             expected=">= 2", actual=sizes)
    for index, following in enumerate(pieces[1:]):
        if not following:
            fail(f"user message {index + 2} of the stage-1 input is empty", actual=sizes)
        size, room = sizes[index], len(following[0].encode("utf-8"))
        assert size <= PIECE_MAX_BYTES, f"user message {index + 1} of the stage-1 input is " \
            f"{size} bytes, over 8,900 (sizes: {sizes})"
        assert size + room > PIECE_MAX_BYTES, f"user message {index + 1} of the stage-1 input " \
            f"ends at {size} bytes although the next character ({room} bytes) still fits in " \
            f"8,900: the cut is not at the last character boundary (sizes: {sizes})"
    joined = "".join(pieces)
    assert "RUN-HEAD" in joined and "RUN-TAIL" in joined, "the pieces joined do not hold the " \
        "message's beginning and end"


V2_WINDOW = 20_000
V2_BUDGET_BYTES = V2_WINDOW * 95 // 100 * 70 // 100 * 4  # P1-IN-03's budget: 53,200 bytes
# Eight user messages of about 9,000 bytes: 72 KB of rows, over the budget of a 20,000-token
# window and far under the default window's (723,520 bytes).
BUDGET_ROWS = [f"ROW-{n}-HEAD " + "x" * 9_000 + f" ROW-{n}-TAIL" for n in range(8)]


@check("p1.v2.budget", title="layout v2: the rows are cut to the token budget of the model's "
       "context window (70 % of 95 %), and sent whole when they fit",
       rules=("P1-V2-04", "P1-IN-03"), level="MUST", area="phase1", codex_since="0.155.0",
       layout="v2")
@pytest.mark.parametrize("window", [V2_WINDOW, None], ids=["window-20000", "default-window"])
def test_budget(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                window: int | None) -> None:
    lines = [{"type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": row}]}}
        for row in BUDGET_ROWS]
    pieces = _stage1_pieces(home, model, run_startup, lines,
                            None if window is None else {"model_context_window": window})
    joined = "".join(pieces)
    size = len(joined.encode("utf-8"))
    markers = [f"ROW-{n}-{end}" for n in range(len(BUDGET_ROWS)) for end in ("HEAD", "TAIL")]
    missing = [marker for marker in markers if marker not in joined]
    if window is None:
        assert not missing, f"rows of about 72 KB, far inside the default window's budget, " \
            f"were not all sent (missing: {', '.join(missing)})"
        return
    assert missing, f"rows of about 72 KB were all sent although model_context_window = " \
        f"{window:,} gives a budget of {V2_BUDGET_BYTES:,} bytes"
    assert size <= V2_BUDGET_BYTES + 8_192, f"the stage-1 input is {size:,} bytes, more than " \
        f"the budget of a {window:,}-token window ({V2_BUDGET_BYTES:,} bytes) and the framing"

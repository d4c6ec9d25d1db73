"""P1-IN: what the extraction request contains and how it is shaped."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks.stage1 import (
    VALID_OUTPUT,
    assert_now,
    configure,
    extracted_once,
    job,
    requests_for,
    user_text,
)
from memconform.clock import HarnessClock
from memconform.codex import releases
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome, Thread
from memconform.mockmodel import MockModel, Recorded, json_output
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.rollout import message
from memconform.schemas import request_problems
from memconform.verdicts import fail

FILTERING = fixture_json("phase1", "filtering.json")
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"rollout_summary": {"type": "string"},
                   "rollout_slug": {"type": ["string", "null"]},
                   "raw_memory": {"type": "string"}},
    "required": ["rollout_summary", "rollout_slug", "raw_memory"],
    "additionalProperties": False,
}
MARKER = re.compile("\u2026(\\d+) tokens truncated\u2026")
ITEMS = {  # what carries each marker of fixtures/phase1/filtering.json
    "KEEP-ENV": "the environment_context user message", "KEEP-USER": "the user's own text",
    "KEEP-CALL": "the function call", "KEEP-OUTPUT": "the function call output",
    "KEEP-ASSISTANT": "the assistant message", "DROP-META": "the session_meta line",
    "DROP-DEVELOPER": "the developer message", "DROP-AGENTS": "the AGENTS.md fragment",
    "DROP-SKILL": "the skill fragment", "DROP-TURN": "the turn_context line",
    "DROP-EVENT": "the event_msg line", "DROP-REASONING": "the reasoning item",
    "DROP-COMPACTED": "the compacted line",
    "DROP-ODD": "the response_item line whose payload is not an object",
}


def item(marker: str) -> str:
    return ITEMS.get(marker.rsplit("-", 1)[0], "the rollout line")


def extract(home: CodexHome, model: MockModel, run_startup: StartupRunner,
            memories: dict[str, Any] | None = None, top: dict[str, Any] | None = None,
            **thread: Any) -> tuple[Thread, Recorded]:
    configure(home, memories, top)
    seeded = home.add_thread(**thread)
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    return seeded, extracted_once(model, seeded.id)


@pytest.fixture
def filtered(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> str:
    _, request = extract(home, model, run_startup, lines=FILTERING["lines"],
                         meta_extra={"base_instructions": {"text": FILTERING["meta_marker"]}})
    return user_text(request)


@check("p1.in.kept", title="user, assistant, tool-call and tool-output items reach the "
       "extraction request", rules="P1-IN-01", level="MUST", area="phase1")
@pytest.mark.parametrize("marker", FILTERING["kept"])
def test_kept(filtered: str, marker: str) -> None:
    assert marker in filtered, f"{item(marker)} of the rollout is missing from the extraction " \
        "request"


@check("p1.in.dropped", title="developer messages, AGENTS.md and skill fragments, reasoning, "
       "events and context lines are dropped", rules="P1-IN-01", level="MUST", area="phase1")
@pytest.mark.parametrize("marker", FILTERING["dropped"])
def test_dropped(filtered: str, marker: str) -> None:
    assert marker not in filtered, f"{item(marker)} of the rollout reached the extraction " \
        "request"


@check("p1.in.request.shape", title="one user message, strict three-field JSON schema, no tools,"
       " low reasoning effort, streamed", rules="P1-IN-02", level="MUST", area="phase1",
       layout="v1")
def test_request_shape(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    thread, request = extract(home, model, run_startup)
    body = request.body
    text = user_text(request)
    fmt = _object(_object(body.get("text")).get("format"))
    assert fmt.get("type") == "json_schema", "the output format is not a JSON schema"
    assert fmt.get("strict") is True, "the output JSON schema is not strict"
    assert fmt.get("schema") == OUTPUT_SCHEMA, \
        "the output schema is not the strict three-field StageOneOutput schema"
    assert body.get("tools", []) == [], "the extraction request offers tools"
    assert _object(body.get("reasoning")).get("effort") == "low", \
        "the extraction request does not ask for low reasoning effort"
    assert body.get("stream") is True, "the extraction request is not streamed"
    assert str(thread.rollout_path) in text, "the rollout path is not in the request"
    assert thread.cwd in text, "the rollout cwd is not in the request"


def _object(value: Any) -> dict[str, Any]:
    """A JSON object of the request, or an empty one when the request has something else."""
    return value if isinstance(value, dict) else {}


@check("p1.in.request.model", title="the extraction model is extract_model, else the "
       "release's default (gpt-5.4-mini in 0.144.6)", rules=("P1-IN-02", "CFG-01"),
       level="MUST", area="phase1")
@pytest.mark.parametrize("configured", [None, "x-extract-model"], ids=["default", "configured"])
def test_request_model(impl: Adapter, home: CodexHome, model: MockModel,
                       run_startup: StartupRunner, configured: str | None) -> None:
    default = releases.get(impl.handshake.follows[0]).stage1_model
    _, request = extract(home, model, run_startup, {"extract_model": configured})
    assert request.body.get("model") == (configured or default), (
        "the extraction request does not use the configured extract_model" if configured
        else f"without extract_model the extraction request does not use {default}, the "
             f"default of the release the implementation follows")


@check("p1.in.request.fields", title="the extraction request is a valid Responses API request: "
       "no unknown parameter, no value outside a parameter's enumeration",
       rules="P1-IN-02", level="MUST", area="phase1")
def test_request_fields(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    _, request = extract(home, model, run_startup)
    found = request_problems(request.body)
    if found:
        fail("the extraction request is not a valid Responses API request (the API answers "
             "400 to an unknown parameter or value): " + "; ".join(found[:5]))


@check("p1.in.request.session", title="the extraction request is not stored and names the "
       "startup's session, not the source thread, in its cache key and session headers",
       rules="P1-IN-02", level="SHOULD", area="phase1")
def test_request_session(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    thread = home.add_thread()
    model.on("stage1", json_output(VALID_OUTPUT))
    session = run_startup(home).get("session_thread_id")
    if session is None:
        fail("the startup of a root session reported no session_thread_id")
    request = extracted_once(model, thread.id)
    body, headers = request.body, request.headers
    assert body.get("store") is False, \
        "the extraction request does not send store: false (the provider may keep the rollout)"
    for name, value in (("prompt_cache_key", body.get("prompt_cache_key")),
                        ("session-id header", headers.get("session-id")),
                        ("thread-id header", headers.get("thread-id"))):
        assert value != thread.id, \
            f"the extraction request's {name} is the source thread's id, not the startup's session"
        assert value == session, \
            f"the extraction request's {name} is not the startup's session_thread_id " \
            f"({value!r}, expected {session!r})"
    try:
        metadata = json.loads(headers.get("x-codex-turn-metadata", ""))
    except ValueError:
        fail("the extraction request has no JSON x-codex-turn-metadata header",
             actual=headers.get("x-codex-turn-metadata"))
    assert isinstance(metadata, dict) and metadata.get("request_kind") == "memory", \
        "the extraction request's x-codex-turn-metadata does not say request_kind: memory"


CONTEXT_WINDOW = 20_000
BUDGET_BYTES = CONTEXT_WINDOW * 95 // 100 * 70 // 100 * 4  # 70 % of the effective window
BIG = "HEAD-MARK " + "a" * 100_000 + " MIDDLE-MARK " + "z" * 100_000 + " TAIL-MARK"


@check("p1.in.truncate", title="a rollout over 70 % of the context window is cut in the middle "
       "with a token marker", rules="P1-IN-03", level="MUST", area="phase1", layout="v1")
def test_truncated(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    _, request = extract(home, model, run_startup, top={"model_context_window": CONTEXT_WINDOW},
                         lines=[message("user", BIG), message("assistant", "done")])
    text = user_text(request)
    found = MARKER.findall(text)
    assert len(found) == 1, \
        "the over-budget rollout does not carry exactly one \u2026N tokens truncated\u2026 marker"
    assert "HEAD-MARK" in text, "the head of the truncated rollout was not kept"
    assert "TAIL-MARK" in text, "the tail of the truncated rollout was not kept"
    assert "done" in text, "the message after the long one was not kept"
    assert "MIDDLE-MARK" not in text, "the middle of the over-budget rollout was not cut"
    size = len(MARKER.sub("", text).encode("utf-8"))
    assert size >= BUDGET_BYTES, \
        "the truncated request keeps less than 70 % of the context window (bytes kept)"
    assert size <= BUDGET_BYTES + 4096, \
        "the truncated request keeps more than 70 % of the context window (bytes kept)"
    removed = int(found[0])
    assert removed >= (len(BIG) - BUDGET_BYTES) // 4, \
        "the truncation marker counts fewer tokens than were cut (four bytes per token)"
    assert removed <= (len(BIG) + 2048 - BUDGET_BYTES) // 4 + 1, \
        "the truncation marker counts more tokens than were cut (four bytes per token)"


@check("p1.in.not-truncated", layout="v1", title="a rollout inside the budget is sent whole",
       rules="P1-IN-03", level="MUST", area="phase1")
def test_not_truncated(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    body = "HEAD-MARK " + "b" * 20_000 + " TAIL-MARK"
    _, request = extract(home, model, run_startup, top={"model_context_window": CONTEXT_WINDOW},
                         lines=[message("user", body)])
    text = user_text(request)
    assert MARKER.search(text) is None, "a rollout inside the budget carries a truncation marker"
    assert body in text, "a rollout inside the budget was not sent whole"


DEFAULT_WINDOW = 272_000
# One user message, serialized as P1-IN-05 writes a message item (checked by p1.in.item-shape):
# the item array is ARRAY_HEAD + the text + ARRAY_TAIL.
ARRAY_HEAD = '[{"type":"message","role":"user","content":[{"type":"input_text","text":"'
ARRAY_TAIL = '"}]}]'
ARRAY_WRAP = len(ARRAY_HEAD) + len(ARRAY_TAIL)


def budget_bytes(window: int | None) -> int:
    """P1-IN-03's budget in bytes: floor(floor(W * 95 / 100) * 70 / 100) tokens, at least one,
    4 bytes each."""
    return max((window or DEFAULT_WINDOW) * 95 // 100 * 70 // 100, 1) * 4


def whole_head(data: bytes, size: int) -> bytes:
    """The longest prefix of `data` within `size` bytes that ends on a character boundary."""
    end = min(size, len(data))
    while 0 < end < len(data) and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end]


def whole_tail(data: bytes, size: int) -> bytes:
    """The longest suffix of `data` within `size` bytes that starts on a character boundary."""
    start = max(len(data) - size, 0)
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]


# name: (model_context_window or None for the default, the user message's text). The ASCII
# texts make the item array exactly the budget, or one byte over it (at 20 002 the double
# floor gives 13 300 tokens, where W * 665 / 1000 would give 13 301 and send 53 204 B whole).
# The multibyte texts put both cuts inside a character (the array's head is 73 ASCII bytes,
# its tail 5, plus the 2-byte "ok"), so a cut that is not moved back to a character boundary
# shows, and at 20 002 a budget of 13 301 tokens would keep a different number of characters.
EXACT = {
    "ascii-exactly-the-budget": (20_000, "a" * (budget_bytes(20_000) - ARRAY_WRAP)),
    "ascii-one-byte-over": (20_000, "a" * (budget_bytes(20_000) - ARRAY_WRAP + 1)),
    "ascii-double-floor": (20_002, "a" * (budget_bytes(20_000) - ARRAY_WRAP + 4)),
    "ascii-default-window-one-byte-over": (None, "a" * (budget_bytes(None) - ARRAY_WRAP + 1)),
    "two-byte-characters": (20_000, "\u00e9" * 30_000 + "ok"),
    "three-byte-characters": (20_000, "\u20ac" * 40_000 + "ok"),
    "three-byte-characters-double-floor": (20_002, "\u20ac" * 40_000 + "ok"),
    "four-byte-characters": (20_000, "\U0001f600" * 30_000 + "ok"),
    "window-of-one-token": (2, "abcdefghijklmnopqrstuvwxyz" * 4),
    "window-of-one": (1, "abcdefghijklmnopqrstuvwxyz" * 4),
}


def _segment_fail(which: str, sent: str, wanted: bytes, budget: int) -> None:
    size = len(sent.encode("utf-8"))
    if "\ufffd" in sent:
        fail(f"the kept {which} of the item array was cut inside a UTF-8 character (U+FFFD in "
             "the request)", expected=len(wanted), actual=size)
    fail(f"the kept {which} of the item array is not the longest whole-character "
         f"{'prefix' if which == 'head' else 'suffix'} within half the byte budget "
         f"({budget // 2} of {budget} bytes)", expected=len(wanted), actual=size)


@check("p1.in.truncate-exact", title="the item array is cut to exactly the byte budget of "
       "floor(floor(W * 95 / 100) * 70 / 100) tokens, each half on a character boundary",
       rules="P1-IN-03", level="MUST", area="phase1", layout="v1")
@pytest.mark.parametrize("case", sorted(EXACT))
def test_truncate_exact(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                        case: str) -> None:
    window, body = EXACT[case]
    _, request = extract(home, model, run_startup,
                         top=None if window is None else {"model_context_window": window},
                         lines=[message("user", body)])
    text = user_text(request)
    array = (ARRAY_HEAD + body + ARRAY_TAIL).encode("utf-8")
    budget = budget_bytes(window)
    found = list(MARKER.finditer(text))
    if len(array) <= budget:
        assert not found, f"an item array of exactly the budget ({budget} bytes) carries a " \
            "truncation marker"
        assert ARRAY_HEAD + body + ARRAY_TAIL in text, \
            f"an item array of exactly the budget ({budget} bytes) was not sent whole"
        return
    assert len(found) == 1, f"an item array of {len(array)} bytes (budget {budget}) does not " \
        "carry exactly one \u2026N tokens truncated\u2026 marker"
    removed = -(-(len(array) - budget) // 4)
    assert int(found[0].group(1)) == removed, \
        f"the truncation marker does not count ceil((array bytes - budget bytes) / 4) tokens " \
        f"({len(array)} - {budget} bytes: {removed})"
    before, after = text[:found[0].start()], text[found[0].end():]
    head, tail = whole_head(array, budget // 2), whole_tail(array, budget // 2)
    if len(head) < len(ARRAY_HEAD):  # a budget of a token or two keeps a few bytes each side
        assert before.endswith(head.decode("utf-8")) and after.startswith(tail.decode()), \
            f"a budget of {budget} bytes does not keep exactly the array's first and last " \
            f"{budget // 2} bytes around the marker"
        return
    start = before.find(ARRAY_HEAD)
    if start < 0:
        fail("the head of the item array (one user message, as P1-IN-05 writes it) is not "
             "before the truncation marker")
    if before[start:].encode("utf-8") != head:
        _segment_fail("head", before[start:], head, budget)
    end = after.find(ARRAY_TAIL)
    sent_tail = after[:end + len(ARRAY_TAIL)] if end >= 0 else after
    if sent_tail.encode("utf-8") != tail:
        _segment_fail("tail", sent_tail, tail, budget)


UNPARSABLE = {
    # name: (where the line goes, the line) — a line a crash or another writer left behind
    "garbage-between-turns": ("middle", "this is not json"),
    "half-written-last-line": ("end", '{"timestamp":"2026-06-01T00:00:00.000Z","type":"resp'),
    "truncated-object-first": ("start", '{"type": "response_item", "payload": {'),
    "blank-line-between-turns": ("middle", ""),
    "whitespace-line-between-turns": ("middle", " \t "),
}


@check("p1.in.unparsable-line", title="a rollout line that is not JSON is skipped and the "
       "rest of the thread is extracted", rules=("P1-IN-04",), level="MUST", area="phase1")
@pytest.mark.parametrize("case", sorted(UNPARSABLE))
def test_unparsable_line(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         case: str) -> None:
    configure(home)
    thread = home.add_thread(user_text="Remember BEFORE-BAD-LINE.",
                             assistant_text="Noted AFTER-BAD-LINE.")
    where, bad = UNPARSABLE[case]
    lines = thread.rollout_path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = {"start": 1, "middle": len(lines) - 1, "end": len(lines)}[where]  # after session_meta
    lines.insert(at, bad + ("" if where == "end" else "\n"))
    thread.rollout_path.write_text("".join(lines), encoding="utf-8")
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    text = user_text(extracted_once(model, thread.id, "the thread with an unparsable line"))
    for marker in ("BEFORE-BAD-LINE", "AFTER-BAD-LINE"):
        assert marker in text, f"the message around the unparsable line ({marker}) was not sent"
    if bad.strip():
        assert bad not in text, "the unparsable line itself was sent to the model"
    row = job(home, thread.id)
    assert row is not None, "the extracted thread has no stage-1 job row"
    assert row["status"] == "done", "one unparsable line failed the whole extraction"


@check("p1.in.unreadable-rollout", title="a missing rollout file fails the job without a "
       "request", rules=("P1-IN-01", "P1-JOB-05"), level="MUST", area="phase1")
def test_missing_rollout(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                         clock: HarnessClock) -> None:
    configure(home)
    thread = home.add_thread()
    thread.rollout_path.unlink()
    model.on("stage1", json_output(VALID_OUTPUT))
    run_startup(home)
    assert len(requests_for(model, thread.id)) == 0, \
        "a stage-1 request was sent for a thread whose rollout file is missing"
    row = job(home, thread.id)
    assert row is not None, "no stage-1 job row: the thread with a missing rollout was not " \
        "claimed and failed"
    assert row["status"] == "error", "a missing rollout did not fail the job"
    assert row["retry_remaining"] == 2, "the failed job did not spend one retry"
    assert row["last_error"], "the failed job records no last_error"
    assert_now(row["finished_at"], clock, "finished_at of the failed job")


SHAPES = fixture_json("phase1", "item_shapes.json")


def rendered_items(text: str) -> tuple[str, list[Any]]:
    """The JSON array of rollout items in the stage-1 text: its exact bytes and its items,
    each object as a list of (field, value) pairs so that field order is kept."""
    decoder = json.JSONDecoder(object_pairs_hook=lambda pairs: pairs)
    for start in (i for i, ch in enumerate(text) if ch == "["):
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            return text[start:end], value
    fail("the stage-1 request carries no JSON array of rollout items")


def _pairs(value: Any) -> Any:
    """A decoded fixture value in the (field, value) pairs form of `rendered_items`."""
    if isinstance(value, dict):
        return [(k, _pairs(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_pairs(v) for v in value]
    return value


@check("p1.in.item-shape", title="each kept rollout item is sent as Codex re-serializes it: "
       "its type's fields in its order, unknown fields dropped", rules=("P1-IN-05",),
       level="MUST", area="phase1", layout="v1")
@pytest.mark.parametrize("case", sorted(SHAPES["cases"]))
def test_item_shape(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                    case: str) -> None:
    spec = SHAPES["cases"][case]
    lines = [{"type": "response_item", "payload": payload} for payload in spec["lines"]]
    _, request = extract(home, model, run_startup, lines=lines)
    raw, items = rendered_items(user_text(request))
    expected = [_pairs(item) for item in spec["expected"]]
    assert len(items) == len(expected), \
        f"the stage-1 request does not carry the binary's number of {case} items"
    for number, (sent, wanted) in enumerate(zip(items, expected, strict=True), 1):
        kind = dict(wanted).get("type")
        assert [k for k, _ in sent] == [k for k, _ in wanted], \
            f"{case} item {number} ({kind}) does not have the binary's fields in its order"
        assert sent == wanted, \
            f"{case} item {number} ({kind}) does not carry the binary's values"
    assert raw == json.dumps(spec["expected"], ensure_ascii=False, separators=(",", ":")), \
        f"the {case} items are not serialized byte for byte as the binary sends them"

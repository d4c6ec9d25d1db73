"""A scriptable mock of the Responses API on pytest-httpserver, speaking SSE the way Codex does.

Each request is classified (`stage1`: strict `json_schema` text format; `consolidation`: the
`x-openai-subagent: memory_consolidation` header; `main`: anything else), answered by the first
matching rule of the current script, and recorded with its headers and body. A scripted
stage-1 answer is fitted to the schema the request asks for: when the schema has no
`raw_memory` (the v2 layout), a scripted object's `raw_memory` is left out of what the mock
sends; every other field, known or not, is sent as scripted.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

RESPONSES_PATH = "/v1/responses"
USAGE_PATH = "/backend-api/wham/usage"
DEFAULT_GATE_TIMEOUT_S = 60.0
KINDS = ("stage1", "consolidation", "main")
ARTIFACTS_CALL_ID = "memconform_artifacts"
# What a consolidation agent of Codex 0.155.0 and later must leave (P2-RUN-08): MEMORY.md, and
# a memory_summary.md whose first line is `v1` (with the four sections a v2 summary needs); in
# the v2 layout only the summary (P2-V2-02)
ARTIFACTS = {
    "MEMORY.md": "# Memory\n\nKept by the memconform mock agent.\n",
    "memory_summary.md": "v1\n## User Profile\n- mock\n## User preferences\n- mock\n"
                         "## General Tips\n- mock\n## What's in Memory\n- mock\n",
}


ARTIFACTS_BY_LAYOUT = {"v1": ("MEMORY.md", "memory_summary.md"), "v2": ("memory_summary.md",)}


def missing_artifacts(root: Path, layout: str = "v1") -> dict[str, str]:
    return {name: ARTIFACTS[name] for name in ARTIFACTS_BY_LAYOUT[layout]
            if not (root / name).exists()}


def artifacts_patch(missing: dict[str, str]) -> str:
    """An apply_patch that adds these artifacts."""
    body = "".join(f"*** Add File: {name}\n"
                   + "".join(f"+{line}\n" for line in text.splitlines())
                   for name, text in missing.items())
    return f"*** Begin Patch\n{body}*** End Patch\n"


class Gate:
    """Holds the replies that wait on it until `release()` (or a bounded timeout)."""

    def __init__(self, timeout_s: float = DEFAULT_GATE_TIMEOUT_S) -> None:
        self._event = threading.Event()
        self.timeout_s = timeout_s
        self.timed_out = False

    def release(self) -> None:
        self._event.set()

    def wait(self) -> None:
        if not self._event.wait(self.timeout_s):
            self.timed_out = True


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with the helper functions below."""

    items: tuple[dict[str, Any], ...] = ()
    http_status: int | None = None
    http_body: str = ""
    failure: str | None = None
    delay_s: float = 0.0
    gate: Gate | None = None
    cut: bool = False
    reset: bool = False
    stall_s: float = 0.0
    probe: Callable[[], None] | None = None
    exact: bool = False  # sent as scripted, never fitted to the request's schema

    def after(self, delay_s: float) -> Reply:
        return dataclasses.replace(self, delay_s=delay_s)

    def probed(self, probe: Callable[[], None]) -> Reply:
        """Call `probe()` when the request arrives, before answering: it sees the files as
        the implementation left them at that moment."""
        return dataclasses.replace(self, probe=probe)

    def held(self, gate: Gate) -> Reply:
        return dataclasses.replace(self, gate=gate)


def message_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def message(text: str) -> Reply:
    return Reply(items=(message_item(text),))


def json_output(value: Any, *, exact: bool = False) -> Reply:
    """An assistant message whose text is `value` serialized as JSON (a stage-1 answer);
    `exact`: sent as it is, whatever schema the request asks for."""
    reply = message(value if isinstance(value, str) else json.dumps(value))
    return dataclasses.replace(reply, exact=exact)


def function_call(name: str, arguments: Any, call_id: str = "call_1") -> Reply:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(items=({"type": "function_call", "name": name, "arguments": args,
                         "call_id": call_id},))


def custom_tool_call(name: str, tool_input: str, call_id: str = "call_1") -> Reply:
    return Reply(items=({"type": "custom_tool_call", "name": name, "input": tool_input,
                         "call_id": call_id},))


def items(*parts: Reply | dict[str, Any]) -> Reply:
    """Several output items in one answer (raw item dicts or single-item replies)."""
    out: list[dict[str, Any]] = []
    for part in parts:
        out.extend(part.items if isinstance(part, Reply) else (part,))
    return Reply(items=tuple(out))


def cut_stream(reply: Reply) -> Reply:
    """`reply`'s items, then the stream ends without `response.completed`."""
    return dataclasses.replace(reply, cut=True)


def stalled(reply: Reply, seconds: float) -> Reply:
    """`reply`, but the stream pauses `seconds` after `response.created`."""
    return dataclasses.replace(reply, stall_s=seconds)


def connection_reset() -> Reply:
    """Start an SSE answer, then drop the connection mid-stream."""
    return Reply(items=(message_item("{\"raw_memory\": \"partial"),), reset=True)


def http_error(status: int, body: str = "mock error") -> Reply:
    return Reply(http_status=status, http_body=body)


def failed(error_message: str) -> Reply:
    """A stream that ends in `response.failed`."""
    return Reply(failure=error_message)


@dataclass
class Rule:
    replies: list[Reply]
    kind: str | None = None
    contains: str | None = None
    has_tool_output: bool | None = None
    repeat_last: bool = True
    used: int = 0

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"rule kind {self.kind!r} is not one of {KINDS}")
        if not self.replies:
            raise ValueError("a rule needs at least one reply")

    def matches(self, kind: str, raw: str, has_tool_output: bool) -> bool:
        return ((self.kind is None or self.kind == kind)
                and (self.contains is None or self.contains in raw)
                and (self.has_tool_output is None or self.has_tool_output == has_tool_output)
                and (self.used < len(self.replies) or self.repeat_last))

    def peek(self) -> Reply:
        return self.replies[min(self.used, len(self.replies) - 1)]

    def take(self) -> Reply:
        reply = self.peek()
        self.used += 1
        return reply


@dataclass(frozen=True)
class Recorded:
    seq: int
    kind: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float

    @property
    def text(self) -> str:
        return json.dumps(self.body)


def classify(headers: dict[str, str], body: Any) -> str:
    if not isinstance(body, dict):
        return "main"
    fmt = ((body.get("text") or {}).get("format") or {})
    if fmt.get("type") == "json_schema":
        return "stage1"
    if headers.get("x-openai-subagent") == "memory_consolidation":
        return "consolidation"
    return "main"


def schema_fields(body: Any) -> frozenset[str] | None:
    """The properties of a stage-1 request's output schema (None: not a stage-1 request)."""
    fmt = ((body.get("text") or {}).get("format") or {}) if isinstance(body, dict) else {}
    properties = (fmt.get("schema") or {}).get("properties") if isinstance(fmt, dict) else None
    return frozenset(properties) if isinstance(properties, dict) else None


def fit_to_schema(reply: Reply, fields: frozenset[str] | None) -> Reply:
    """`reply` without `raw_memory` in its JSON-object messages when the schema lacks it."""
    if fields is None or "raw_memory" in fields or not reply.items or reply.exact:
        return reply
    items = []
    for item in reply.items:
        if item.get("type") == "message":
            parts = []
            for part in item.get("content", []):
                try:
                    value = json.loads(part.get("text", ""))
                except (TypeError, ValueError):
                    value = None
                if isinstance(value, dict) and "raw_memory" in value:
                    kept = {k: v for k, v in value.items() if k != "raw_memory"}
                    part = {**part, "text": json.dumps(kept)}
                parts.append(part)
            item = {**item, "content": parts}
        items.append(item)
    return dataclasses.replace(reply, items=tuple(items))


def has_tool_output(body: Any) -> bool:
    """Whether a request's input carries a tool result (`*_output` item)."""
    entries = body.get("input") if isinstance(body, dict) else None
    return any(isinstance(e, dict) and str(e.get("type", "")).endswith("_output")
               for e in entries or [])


class DroppedConnection(ConnectionResetError):
    """Raised inside a streamed body so the server closes the socket mid-answer."""


def _dropped(stream: str) -> Iterator[bytes]:
    yield stream[: len(stream) // 2].encode("utf-8")
    raise DroppedConnection("mock dropped the connection")


def _stalled(stream: str, seconds: float) -> Iterator[bytes]:
    first, _, rest = stream.partition("\n\n")
    yield (first + "\n\n").encode("utf-8")
    time.sleep(seconds)
    yield rest.encode("utf-8")


def _sse(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


@dataclass
class MockModel:
    """One mock per server; `reset()` between checks clears the script and the log."""

    server: HTTPServer
    rules: list[Rule] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    default: Reply = field(default_factory=lambda: message("mock default reply"))
    probe_errors: list[str] = field(default_factory=list)
    # the memory root whose missing artifacts the consolidation agent adds (one apply_patch
    # call) before its final answer: set for implementations of releases whose agents must
    # leave them (P2-RUN-08)
    agent_artifacts: Path | None = None
    artifacts_layout: str = "v1"  # which artifacts that layout requires
    artifacts_written: set[str] = field(default_factory=set)  # names the mock's agent added

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._probed: set[int] = set()  # final replies whose probe ran before the artifacts
        self.server.expect_request(RESPONSES_PATH, method="POST").respond_with_handler(self._handle)

    @property
    def base_url(self) -> str:
        return self.server.url_for("/v1").rstrip("/")

    def reset(self) -> None:
        with self._lock:
            self.rules = []
            self.requests = []
            self.probe_errors = []
            self._probed.clear()
            self.artifacts_written.clear()

    def on(self, kind: str | None, *replies: Reply, contains: str | None = None,
           has_tool_output: bool | None = None, repeat_last: bool = True) -> Rule:
        rule = Rule(list(replies), kind, contains, has_tool_output, repeat_last)
        with self._lock:
            self.rules.append(rule)
        return rule

    @property
    def backend_url(self) -> str:
        """The ChatGPT backend base URL (`chatgpt_base_url`) served by this mock."""
        return self.server.url_for("/backend-api").rstrip("/")

    def set_usage(self, body: Any, status: int = 200) -> None:
        """Answer the plan-usage endpoint with `body` (recorded as kind `usage`)."""
        def handle(request: Request) -> Response:
            headers = {k.lower(): v for k, v in request.headers.items()}
            with self._lock:
                self.requests.append(Recorded(next(self._ids), "usage", request.path, headers,
                                              None, time.time()))
            text = body if isinstance(body, str) else json.dumps(body)
            return Response(text, status=status, mimetype="application/json")

        self.server.expect_request(USAGE_PATH, method="GET").respond_with_handler(handle)

    def of_kind(self, kind: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def _handle(self, request: Request) -> Response:
        raw = request.get_data(as_text=True)
        try:
            body: Any = json.loads(raw)
        except json.JSONDecodeError:
            body = raw
        headers = {k.lower(): v for k, v in request.headers.items()}
        kind = classify(headers, body)
        tool_output = has_tool_output(body)
        with self._lock:
            seq = next(self._ids)
            self.requests.append(Recorded(seq, kind, request.path, headers, body, time.time()))
            rule = next((r for r in self.rules if r.matches(kind, raw, tool_output)), None)
            reply = rule.peek() if rule is not None else self.default
            if kind == "stage1":
                reply = fit_to_schema(reply, schema_fields(body))
            patch = self._artifacts_first(reply, body) if kind == "consolidation" else None
            if patch is not None:  # the agent finishes after its artifacts are written
                final, reply = reply, custom_tool_call("apply_patch", patch, ARTIFACTS_CALL_ID)
                self._probed.add(id(final))
                reply = dataclasses.replace(reply, probe=final.probe)
            else:
                if rule is not None:
                    rule.take()
                if id(reply) in self._probed:  # its probe ran before the artifacts were written
                    self._probed.discard(id(reply))
                    reply = dataclasses.replace(reply, probe=None)
        if reply.probe is not None:
            try:
                reply.probe()
            except Exception as exc:  # the check sees it in `probe_errors`
                with self._lock:
                    self.probe_errors.append(f"{type(exc).__name__}: {exc}")
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.gate is not None:
            reply.gate.wait()
        if reply.http_status is not None:
            return Response(reply.http_body, status=reply.http_status, mimetype="text/plain")
        if reply.reset:
            return Response(_dropped(self._stream(seq, reply)), status=200,
                            mimetype="text/event-stream")
        if reply.stall_s:
            return Response(_stalled(self._stream(seq, reply), reply.stall_s), status=200,
                            mimetype="text/event-stream")
        return Response(self._stream(seq, reply), status=200, mimetype="text/event-stream")

    def _artifacts_first(self, reply: Reply, body: Any) -> str | None:
        """The patch the agent sends before `reply`, its final answer, when artifacts are
        missing from the memory root (None: answer with `reply`)."""
        if self.agent_artifacts is None or not reply.items or reply.http_status is not None \
                or reply.failure or reply.cut or reply.reset:
            return None
        if any(item.get("type") != "message" for item in reply.items):
            return None  # a tool call: the agent is not finishing yet
        entries = body.get("input") if isinstance(body, dict) else None
        if any(isinstance(e, dict) and e.get("call_id") == ARTIFACTS_CALL_ID
               for e in entries or []):
            return None  # written once in this conversation
        missing = missing_artifacts(self.agent_artifacts, self.artifacts_layout)
        if not missing:
            return None
        self.artifacts_written.update(missing)
        return artifacts_patch(missing)

    def _stream(self, seq: int, reply: Reply) -> str:
        return sse_stream(seq, reply.items, cut=reply.cut, failure=reply.failure)


def sse_stream(seq: int, output: tuple[dict[str, Any], ...] | list[dict[str, Any]], *,
               cut: bool = False, failure: str | None = None) -> str:
    """A whole Responses API answer as server-sent events: `response.created`, one
    `response.output_item.done` per item, then `response.completed` (or `response.failed`, or
    nothing when `cut`)."""
    response_id = f"resp_{seq}"
    out = [_sse({"type": "response.created", "response": {"id": response_id}})]
    for index, item in enumerate(output):
        done = {"id": f"item_{seq}_{index}", **item}
        if done["type"] in ("function_call", "custom_tool_call"):
            done.setdefault("status", "completed")
        out.append(_sse({"type": "response.output_item.done", "output_index": index,
                         "item": done}))
    if cut:
        return "".join(out)
    if failure is not None:
        out.append(_sse({"type": "response.failed", "response": {
            "id": response_id, "error": {"code": "server_error", "message": failure}}}))
    else:
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        out.append(_sse({"type": "response.completed",
                         "response": {"id": response_id, "usage": usage}}))
    return "".join(out)


class _QuickStopServer(HTTPServer):
    """Looks for a stop request every `STOP_POLL_S` instead of werkzeug's half second, which
    every run paid once when its server stopped."""

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=STOP_POLL_S)


STOP_POLL_S = 0.02


def start_server() -> HTTPServer:
    """A threaded loopback server (gated replies must not block other requests). Its per-request
    access log is off: the mock records every request itself."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = _QuickStopServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    return server

"""The loopback endpoint a Codex session talks to: it answers the session's own turn from a
script (held until the adapter releases it) and passes every memory-pipeline request through
to the harness's mock model unchanged, streaming the answer back as it comes."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from memconform.mockmodel import classify, message_item, sse_stream

FORWARD_TIMEOUT_S = 600.0
HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive"}


@dataclass
class Turn:
    """The session's turn: model answers in order (the last repeats), the requests seen, and
    the gate that holds the first answer."""

    answers: list[list[dict[str, Any]]]
    gate: threading.Event = field(default_factory=threading.Event)
    gate_timeout_s: float = 300.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    def next_answer(self) -> list[dict[str, Any]]:
        index = min(len(self.requests) - 1, len(self.answers) - 1)
        return self.answers[index] if index >= 0 else [message_item("ok")]


class Front:
    """One per adapter; `begin()` arms it for the next session."""

    def __init__(self) -> None:
        self.upstream = ""
        self.turn = Turn([[message_item("ok")]])
        self.turn.gate.set()
        self.inflight = 0
        self.last_activity = time.monotonic()
        self.pipeline_requests = 0
        self._lock = threading.Lock()
        self._seq = 0
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:
                front.handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def begin(self, upstream: str, turn: Turn) -> None:
        with self._lock:
            self.upstream = upstream.rstrip("/")
            self.turn = turn
            self.inflight = 0
            self.pipeline_requests = 0
            self.last_activity = time.monotonic()

    def close(self) -> None:
        self.turn.gate.set()
        self.server.shutdown()
        self.server.server_close()

    def quiet_for(self) -> float:
        with self._lock:
            return 0.0 if self.inflight else time.monotonic() - self.last_activity

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("content-length") or 0)
        raw = request.rfile.read(length)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        if classify(headers, body) == "main":
            self._answer_turn(request, body)
        else:
            self._forward(request, raw, headers)

    def _answer_turn(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        turn = self.turn
        with self._lock:
            turn.requests.append(body if isinstance(body, dict) else {})
            answer = turn.next_answer()
            self._seq += 1
            seq = self._seq
        turn.arrived.set()
        turn.gate.wait(turn.gate_timeout_s)
        payload = sse_stream(seq, answer).encode("utf-8")
        request.send_response(200)
        request.send_header("content-type", "text/event-stream")
        request.send_header("content-length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)

    def _forward(self, request: BaseHTTPRequestHandler, raw: bytes,
                 headers: dict[str, str]) -> None:
        with self._lock:
            self.inflight += 1
            self.pipeline_requests += 1
            upstream = urlsplit(self.upstream)
        try:
            suffix = request.path.split("/v1", 1)[-1]
            conn = http.client.HTTPConnection(upstream.hostname or "127.0.0.1", upstream.port,
                                              timeout=FORWARD_TIMEOUT_S)
            conn.request("POST", upstream.path + suffix, body=raw, headers={
                k: v for k, v in headers.items() if k not in HOP_HEADERS})
            reply = conn.getresponse()
            request.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in HOP_HEADERS:
                    request.send_header(key, value)
            request.end_headers()
            while chunk := reply.read1(65536):
                request.wfile.write(chunk)
                request.wfile.flush()
            conn.close()
        except OSError:
            request.close_connection = True  # the upstream dropped: drop the session too
        finally:
            with self._lock:
                self.inflight -= 1
                self.last_activity = time.monotonic()

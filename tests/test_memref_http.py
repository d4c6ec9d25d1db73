"""memref's standard-library HTTP client for the Responses API and the usage endpoint: chunked
SSE with either line end, the idle timeout, refusals and unusable URLs all end as errors that
name the URL, never as a hang or a traceback."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memref.config import Provider
from memref.responses import HttpError, ModelError, request, stream_response

ITEM = {"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "hi"}]}
EVENTS = [{"type": "response.output_item.done", "item": ITEM},
          {"type": "response.completed", "response": {"usage": {"total_tokens": 3}}}]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "crlf"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer()  # the client gives up on a stalled stream

    def _answer(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        end = "\r\n" if self.mode == "crlf" else "\n"
        for event in EVENTS:
            if self.mode == "stall":
                time.sleep(1.0)
            data = f"event: {event['type']}{end}data: {json.dumps(event)}{end}{end}".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def provider(httpd: ThreadingHTTPServer, idle_ms: int | None = None) -> Provider:
    return Provider(name="t", base_url=f"http://127.0.0.1:{httpd.server_address[1]}",
                    stream_idle_timeout_ms=idle_ms)


@pytest.mark.parametrize("mode", ["crlf", "lf"])
def test_chunked_stream_with_either_line_end(server: ThreadingHTTPServer, mode: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Handler, "mode", mode)
    reply = stream_response(provider(server), {"input": []}, timeout_s=5)
    assert reply.output_text() == "hi"
    assert reply.usage == {"total_tokens": 3}


def test_a_stalled_stream_ends_at_the_idle_timeout(server: ThreadingHTTPServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Handler, "mode", "stall")
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"request to http://127\.0\.0\.1:\d+/responses failed"):
        stream_response(provider(server, idle_ms=200), {"input": []}, timeout_s=30)
    assert time.monotonic() - started < 5


def test_a_refused_connection_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = Provider(name="t", base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(ModelError, match=rf"127\.0\.0\.1:{port}/responses failed"):
        stream_response(closed, {"input": []}, timeout_s=5)


@pytest.mark.parametrize("url", ["ftp://example.invalid/x", "http:///nohost", "not a url"])
def test_an_unusable_url_is_refused_before_connecting(url: str) -> None:
    with pytest.raises(HttpError, match="not an http"), \
            request("GET", url, headers={}, timeout_s=1):
        pass

"""A minimal streaming client for the Responses API (`POST {base_url}/responses`, SSE)."""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import os
import ssl
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memref.config import Provider

DEFAULT_TIMEOUT_S = 120.0


class ModelError(RuntimeError):
    """The model call failed: transport error, HTTP error, `response.failed`, or a cut stream."""


@dataclass
class ModelResponse:
    items: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None

    def output_text(self) -> str:
        """Concatenated `output_text` of all assistant messages."""
        parts: list[str] = []
        for item in self.items:
            if item.get("type") == "message" and item.get("role") == "assistant":
                for content in item.get("content") or []:
                    if content.get("type") == "output_text":
                        parts.append(str(content.get("text", "")))
        return "".join(parts)


def _headers(provider: Provider, env: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "text/event-stream", **extra}
    if provider.env_key:
        key = env.get(provider.env_key, os.environ.get(provider.env_key))
        if key is None:
            raise ModelError(f"environment variable {provider.env_key} for provider "
                             f"{provider.name!r} is not set")
        headers["authorization"] = f"Bearer {key}"
    return headers


def _events(lines: Any) -> Any:
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield json.loads("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        yield json.loads("\n".join(data))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every request, trusting certifi's CA bundle (loading it costs
    tens of milliseconds, so only an https URL loads it)."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class HttpError(OSError):
    """A request that got no usable answer: the connection failed or timed out."""


@contextlib.contextmanager
def request(method: str, url: str, *, headers: dict[str, str], body: bytes | None = None,
            timeout_s: float, read_timeout_s: float | None = None
            ) -> Iterator[http.client.HTTPResponse]:
    """One HTTP/1.1 request with the standard library (no proxy). `timeout_s` bounds the
    connection and sending; `read_timeout_s` (default `timeout_s`) each wait for answer bytes."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError(f"not an http(s) URL: {url!r}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = (http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout_s,
                                              context=tls_context())
                  if parts.scheme == "https"
                  else http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout_s))
    try:
        connection.request(method, path, body=body, headers=headers)
        if connection.sock is not None and read_timeout_s is not None:
            connection.sock.settimeout(read_timeout_s)
        yield connection.getresponse()
    except (OSError, http.client.HTTPException) as exc:
        raise HttpError(f"{method} {url}: {exc or type(exc).__name__}") from exc
    finally:
        connection.close()


def _lines(reply: http.client.HTTPResponse) -> Iterator[str]:
    """The answer's lines without their line ends, read as they arrive."""
    while raw := reply.readline():
        yield raw.decode("utf-8").rstrip("\r\n")


def stream_response(
    provider: Provider,
    body: dict[str, Any],
    *,
    env: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ModelResponse:
    """Send one request and collect the finished output items."""
    url = f"{provider.base_url}/responses"
    result = ModelResponse()
    idle_s = None if provider.stream_idle_timeout_ms is None \
        else provider.stream_idle_timeout_ms / 1000
    try:
        with request("POST", url, headers=_headers(provider, env or {}, headers or {}),
                     body=json.dumps(body).encode("utf-8"), timeout_s=timeout_s,
                     read_timeout_s=idle_s) as reply:
            if reply.status != 200:
                text = reply.read().decode("utf-8", "replace")
                raise ModelError(f"HTTP {reply.status} from {url}: {text[:500]}")
            for event in _events(_lines(reply)):
                kind = event.get("type")
                if kind == "response.output_item.done":
                    result.items.append(event["item"])
                elif kind == "response.failed":
                    error = (event.get("response") or {}).get("error") or {}
                    raise ModelError(f"response.failed: {error.get('message', 'no message')}")
                elif kind == "response.completed":
                    result.usage = (event.get("response") or {}).get("usage")
                    return result
    except (HttpError, UnicodeDecodeError) as exc:  # request() wraps socket and HTTP errors
        raise ModelError(f"request to {url} failed: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ModelError(f"malformed SSE data from {url}: {exc}") from exc
    raise ModelError(f"stream from {url} ended before response.completed")

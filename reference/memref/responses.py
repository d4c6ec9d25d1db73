"""A minimal streaming client for the Responses API (`POST {base_url}/responses`, SSE)."""

from __future__ import annotations

import functools
import json
import os
import ssl
from dataclasses import dataclass, field
from typing import Any

import httpx

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
    """One TLS context for every request: loading the CA bundle costs tens of milliseconds."""
    return httpx.create_ssl_context()


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
    if provider.stream_idle_timeout_ms is not None:
        idle_s = provider.stream_idle_timeout_ms / 1000
        timeout: httpx.Timeout | float = httpx.Timeout(timeout_s, read=idle_s)
    else:
        timeout = timeout_s
    try:
        with httpx.stream(
            "POST", url, json=body, headers=_headers(provider, env or {}, headers or {}),
            timeout=timeout, verify=tls_context(),
        ) as reply:
            if reply.status_code != 200:
                text = reply.read().decode("utf-8", "replace")
                raise ModelError(f"HTTP {reply.status_code} from {url}: {text[:500]}")
            for event in _events(reply.iter_lines()):
                kind = event.get("type")
                if kind == "response.output_item.done":
                    result.items.append(event["item"])
                elif kind == "response.failed":
                    error = (event.get("response") or {}).get("error") or {}
                    raise ModelError(f"response.failed: {error.get('message', 'no message')}")
                elif kind == "response.completed":
                    result.usage = (event.get("response") or {}).get("usage")
                    return result
    except httpx.HTTPError as exc:
        raise ModelError(f"request to {url} failed: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ModelError(f"malformed SSE data from {url}: {exc}") from exc
    raise ModelError(f"stream from {url} ended before response.completed")

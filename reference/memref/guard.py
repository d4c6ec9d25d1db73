"""The rate-limit guard (GUARD-01, GUARD-02): skip the pipeline when the ChatGPT plan is
nearly used up. Only a ChatGPT login (`auth.json` with tokens) has such a limit; any failure
to learn it lets the pipeline run (fail-open).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from memref.config import CodexConfig
from memref.responses import HttpError, request

log = logging.getLogger(__name__)
USAGE_PATH = "/wham/usage"
TIMEOUT_S = 10.0


def chatgpt_tokens(home: Path) -> dict[str, Any] | None:
    """The ChatGPT login tokens of `<home>/auth.json`, or None (API key or no login)."""
    try:
        data = json.loads((home / "auth.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str):
        return tokens
    return None


def within_limit(snapshot: dict[str, Any], min_remaining_percent: int) -> bool:
    """Every reported window must have used at most `100 - min_remaining_percent` percent
    (the setting is already clamped to 0..100, CFG-02)."""
    limits = snapshot.get("rate_limit")
    if not isinstance(limits, dict):
        return True
    if limits.get("limit_reached") is True or snapshot.get("rate_limit_reached_type"):
        return False
    max_used = 100 - min_remaining_percent
    for key in ("primary_window", "secondary_window"):
        window = limits.get(key)
        if isinstance(window, dict) and isinstance(window.get("used_percent"), int | float) \
                and window["used_percent"] > max_used:
            return False
    return True


def rate_limits_ok(home: Path, config: CodexConfig) -> bool:
    tokens = chatgpt_tokens(home)
    if tokens is None:
        return True
    headers = {"authorization": f"Bearer {tokens['access_token']}",
               "accept": "application/json"}
    if isinstance(tokens.get("account_id"), str):
        headers["chatgpt-account-id"] = tokens["account_id"]
    url = config.chatgpt_base_url + USAGE_PATH
    try:
        with request("GET", url, headers=headers, timeout_s=TIMEOUT_S) as reply:
            status, payload = reply.status, reply.read()
        if status != 200:
            raise ValueError(f"GET {url}: HTTP {status}")
        snapshot = json.loads(payload)
    except (HttpError, ValueError) as exc:
        log.warning("rate-limit check failed, running anyway: %s", exc)
        return True
    if not isinstance(snapshot, dict):
        return True
    allowed = within_limit(snapshot, config.memories.min_rate_limit_remaining_percent)
    if not allowed:
        log.info("memories startup skipped: rate limits below the configured threshold")
    return allowed

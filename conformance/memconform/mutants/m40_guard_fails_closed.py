"""The rate-limit guard skips the pipeline when plan usage cannot be fetched."""

from pathlib import Path

import httpx

from memconform.mutants import Mutant, patch
from memref import guard, startup
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig

MUTANT = Mutant("m40-guard-fails-closed", __doc__ or "",
                ("p1.guard.chatgpt[usage-endpoint-error-fails-open]",))


def _closed(home: Path, config: CodexConfig) -> bool:
    if guard.chatgpt_tokens(home) is None:
        return True
    try:
        reply = httpx.get(config.chatgpt_base_url + guard.USAGE_PATH, timeout=5)
        reply.raise_for_status()
        return guard.within_limit(reply.json(), config.memories.min_rate_limit_remaining_percent)
    except (httpx.HTTPError, ValueError):
        return False


def factory() -> ReferenceAdapter:
    patch(startup, "rate_limits_ok", _closed)
    return ReferenceAdapter()

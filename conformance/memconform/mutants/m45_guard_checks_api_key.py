"""The rate-limit guard asks for plan usage even for an API-key provider."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import guard
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m45-guard-checks-api-key", __doc__ or "", ("p1.guard.api-key",))
_original = guard.chatgpt_tokens


def _always(home: Any) -> dict[str, Any]:
    return _original(home) or {"access_token": "none"}


def factory() -> ReferenceAdapter:
    patch(guard, "chatgpt_tokens", _always)
    return ReferenceAdapter()

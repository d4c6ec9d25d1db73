"""The rate-limit guard only looks at the primary window."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import guard
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m41-guard-primary-only", __doc__ or "",
                ("p1.guard.chatgpt[secondary-too-used]",))
_original = guard.within_limit


def _primary_only(snapshot: dict[str, Any], min_remaining_percent: int) -> bool:
    limits = snapshot.get("rate_limit")
    if isinstance(limits, dict):
        snapshot = {**snapshot, "rate_limit": {k: v for k, v in limits.items()
                                               if k != "secondary_window"}}
    return _original(snapshot, min_remaining_percent)


def factory() -> ReferenceAdapter:
    patch(guard, "within_limit", _primary_only)
    return ReferenceAdapter()

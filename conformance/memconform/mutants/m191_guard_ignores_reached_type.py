"""The plan-usage guard reads only the rate limit's own flag and windows, not the answer's
`rate_limit_reached_type`."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import guard
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m191-guard-ignores-reached-type", __doc__ or "",
                ("p1.guard.chatgpt[reached-type-refuses]",))


def factory() -> ReferenceAdapter:
    original = guard.within_limit

    def within_limit(snapshot: dict[str, Any], min_remaining_percent: int) -> bool:
        rest = {k: v for k, v in snapshot.items() if k != "rate_limit_reached_type"}
        return original(rest, min_remaining_percent)

    patch(guard, "within_limit", within_limit)
    return ReferenceAdapter()

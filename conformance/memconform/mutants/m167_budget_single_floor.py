"""The stage-1 input budget is W * 665 / 1000 tokens rounded down once, not
floor(floor(W * 95 / 100) * 70 / 100)."""

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m167-budget-single-floor", __doc__ or "",
                ("p1.in.truncate-exact[ascii-double-floor]",
                 "p1.in.truncate-exact[three-byte-characters-double-floor]"))


def token_budget(context_window: int | None) -> int:
    window = context_window if context_window and context_window > 0 else \
        rollout_input.FALLBACK_CONTEXT_WINDOW
    return max(window * 665 // 1000, 1)


def factory() -> ReferenceAdapter:
    patch(rollout_input, "token_budget", token_budget)
    return ReferenceAdapter()

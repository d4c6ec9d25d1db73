"""Layout v2 stage-1 input: the rows are cut to the budget of the default context window
(272,000 tokens), whatever `model_context_window` says."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase1, releases, rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m217-v2-rows-ignore-context-window", __doc__ or "",
                ("p1.v2.budget[window-20000]",))
_original = rollout_input.render_rows


def render_rows(items: list[dict[str, Any]], context_window: int | None) -> str:
    return _original(items, None)


def factory() -> ReferenceAdapter:
    patch(phase1, "render_rows", render_rows)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

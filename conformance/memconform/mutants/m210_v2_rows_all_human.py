"""Layout v2 rows: every user message is labelled `human user` (no `harness context` for the
environment context, no `other agent` for a sub-agent's notification)."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import releases, rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m210-v2-rows-all-human", __doc__ or "", ("p1.v2.rows",))
_original = rollout_input.row_label


def row_label(item: dict[str, Any]) -> str:
    label = _original(item)
    return "human user" if label in ("harness context", "other agent") else label


def factory() -> ReferenceAdapter:
    patch(rollout_input, "row_label", row_label)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

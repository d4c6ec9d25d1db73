"""Developer messages are sent to the extraction model."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m30-developer-messages-kept", __doc__ or "",
                ("p1.in.dropped[DROP-DEVELOPER-1]",))
_original = rollout_input.keep


def _keep(item: dict[str, Any]) -> dict[str, Any] | None:
    if item.get("type") == "message" and item.get("role") == "developer":
        return item
    return _original(item)


def factory() -> ReferenceAdapter:
    patch(rollout_input, "keep", _keep)
    return ReferenceAdapter()

"""Kept rollout items are sent as the raw line had them (its field order, unknown fields, nulls)
instead of being re-serialized in their type's shape; items that do not fit are still skipped."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m130-raw-items-passed", __doc__ or "", ("p1.in.item-shape",))


def factory() -> ReferenceAdapter:
    shaped = rollout_input.reshape

    def raw(item: dict[str, Any]) -> dict[str, Any]:
        shaped(item)  # raises UnfitItem for an item that does not fit its type
        return item

    patch(rollout_input, "reshape", raw)
    return ReferenceAdapter()

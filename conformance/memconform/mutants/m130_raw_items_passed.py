"""Kept rollout items are sent as the raw line had them (its field order, unknown fields, nulls)
instead of being re-serialized in their type's shape."""

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m130-raw-items-passed", __doc__ or "", ("p1.in.item-shape",))


def factory() -> ReferenceAdapter:
    patch(rollout_input, "reshape", lambda item: item)
    return ReferenceAdapter()

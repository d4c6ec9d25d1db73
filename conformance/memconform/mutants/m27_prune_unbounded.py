"""Retention prunes every stale row in one go instead of 200 per startup."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m27-prune-unbounded", __doc__ or "", ("p1.ret.batch",))


def factory() -> ReferenceAdapter:
    patch(retention, "PRUNE_BATCH", 1_000_000)
    return ReferenceAdapter()

"""Candidates are ordered by the threads' updated_at in whole seconds (ties by ascending id),
not by updated_at_ms."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m169-candidates-by-second", __doc__ or "",
                ("p1.cand.select[newest-first-within-one-second]",))


def factory() -> ReferenceAdapter:
    patch(candidates, "ORDER", "updated_at DESC, id ASC")
    return ReferenceAdapter()

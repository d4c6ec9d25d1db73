"""Candidates are taken oldest first."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m17-oldest-first", __doc__ or "", ("p1.cand.select[newest-first]",))


def factory() -> ReferenceAdapter:
    patch(candidates, "ORDER", "updated_at_ms ASC")
    return ReferenceAdapter()

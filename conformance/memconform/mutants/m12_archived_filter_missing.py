"""Archived threads are candidates."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m12-archived-filter-missing", __doc__ or "",
                ('p1.cand.select[archived]',))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if 'archived = 0' not in f))
    return ReferenceAdapter()

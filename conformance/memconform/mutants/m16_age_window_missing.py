"""Threads of any age are candidates."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m16-age-window-missing", __doc__ or "",
                ('p1.cand.select[age-beyond-default]',))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if ':oldest' not in f))
    return ReferenceAdapter()

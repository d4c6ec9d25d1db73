"""Paginated-history threads are candidates."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m14-history-mode-filter-missing", __doc__ or "",
                ('p1.cand.select[history-mode-paginated]',))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if 'history_mode' not in f))
    return ReferenceAdapter()

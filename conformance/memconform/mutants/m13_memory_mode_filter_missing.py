"""Disabled and polluted threads are candidates."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m13-memory-mode-filter-missing", __doc__ or "",
                ('p1.cand.select[memory-mode-polluted]', 'p1.cand.select[memory-mode-disabled]'))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if 'memory_mode' not in f))
    return ReferenceAdapter()

"""Threads from any source are candidates."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m11-source-filter-missing", __doc__ or "",
                ('p1.cand.select[source-exec]', 'p1.cand.select[source-mcp]'))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if 'source IN' not in f))
    return ReferenceAdapter()

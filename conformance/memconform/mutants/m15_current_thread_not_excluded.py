"""The running session's own thread is a candidate."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m15-current-thread-not-excluded", __doc__ or "",
                ('p1.cand.current-thread',))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f for f in candidates.FILTERS if ':current' not in f))
    return ReferenceAdapter()

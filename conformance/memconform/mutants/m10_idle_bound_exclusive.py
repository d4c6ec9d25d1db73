"""The idle bound is exclusive: a thread idle for exactly the threshold is skipped."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m10-idle-bound-exclusive", __doc__ or "",
                ("p1.cand.window-bounds[idle-exactly-one-hour]",))


def factory() -> ReferenceAdapter:
    patch(candidates, "FILTERS", tuple(f.replace("<= :newest", "< :newest")
                                       for f in candidates.FILTERS))
    return ReferenceAdapter()

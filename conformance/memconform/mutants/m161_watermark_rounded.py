"""The stage-1 watermark S is the thread's updated_at_ms rounded to the nearest second instead
of rounded down: an update at .999 s counts as the next second."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m161-watermark-rounded", __doc__ or "",
                ("p1.cand.select[up-to-date-output-at-floored-second]",
                 "p1.cand.select[success-watermark-at-floored-second]",
                 "p1.out.floored-watermark"))


def factory() -> ReferenceAdapter:
    patch(candidates.Candidate, "watermark",
          property(lambda self: (self.updated_at_ms + 500) // 1000))
    return ReferenceAdapter()

"""A success exactly six hours ago still holds the consolidation job: the cooldown includes
its end (`finished_at >= now - 21600`)."""

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m151-cooldown-includes-its-end", __doc__ or "",
                ("p2.job.claim[cooldown-ends-at-six-hours]",))


def factory() -> ReferenceAdapter:
    # `finished_at > now - 21601` is `finished_at >= now - 21600` on whole seconds
    patch(jobs, "COOLDOWN_S", 21_601)
    return ReferenceAdapter()

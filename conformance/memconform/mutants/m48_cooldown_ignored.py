"""The consolidation job can be claimed again right after a success (no 6 h cooldown)."""

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m48-cooldown-ignored", __doc__ or "",
                ("p2.job.claim[success-cooldown]", "p2.job.success"))


def factory() -> ReferenceAdapter:
    patch(jobs, "COOLDOWN_S", 0)
    return ReferenceAdapter()

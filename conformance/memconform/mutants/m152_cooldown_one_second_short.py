"""The cooldown after a success ends one second early (21 599 s): a success 21 599 s ago no
longer holds the consolidation job, also when now is 999 ms past that second."""

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m152-cooldown-one-second-short", __doc__ or "",
                ("p2.job.claim[cooldown-one-second-short]",
                 "p2.job.claim[cooldown-one-second-short-at-999-ms]"))


def factory() -> ReferenceAdapter:
    patch(jobs, "COOLDOWN_S", 21_599)
    return ReferenceAdapter()

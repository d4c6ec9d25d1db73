"""The candidate scan has no 5,000-thread bound."""

from memconform.mutants import Mutant, patch
from memref import candidates
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m33-scan-unbounded", __doc__ or "", ("p1.cand.scan-limit[5000-up-to-date]",))


def factory() -> ReferenceAdapter:
    patch(candidates, "SCAN_LIMIT", 1_000_000)
    return ReferenceAdapter()

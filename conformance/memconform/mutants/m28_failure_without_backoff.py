"""A failed extraction is retried immediately (no one-hour backoff)."""

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m28-failure-without-backoff", __doc__ or "",
                ("p1.out.invalid[not-json]", "p1.model.fault[http-500]"))


def factory() -> ReferenceAdapter:
    patch(jobs.failed, "__defaults__", (0,))
    return ReferenceAdapter()

"""Pruning deletes rows whose last use (else source time) is at the cutoff too, not only
before it."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter
from memref.selection import unused_cutoff as _cutoff

MUTANT = Mutant("m165-prune-bound-inclusive", __doc__ or "",
                ("p1.ret.bound[five-days]", "p1.ret.bound[five-days-now-at-999ms]",
                 "p1.ret.bound[zero-days]"))


def unused_cutoff(now: int, max_unused_days: int) -> int:
    # `recency < cutoff + 1` is `recency <= cutoff`
    return _cutoff(now, max_unused_days) + 1


def factory() -> ReferenceAdapter:
    patch(retention, "unused_cutoff", unused_cutoff)
    return ReferenceAdapter()

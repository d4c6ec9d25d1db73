"""Pruning ages a row by the newer of its last use and its source time, so an old last use is
ignored when the row was re-extracted recently."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m166-prune-newest-of-use-and-source", __doc__ or "",
                ("p1.ret.last-use-decides",))


def factory() -> ReferenceAdapter:
    patch(retention, "RECENCY",
          "MAX(COALESCE(last_usage, source_updated_at), source_updated_at)")
    return ReferenceAdapter()

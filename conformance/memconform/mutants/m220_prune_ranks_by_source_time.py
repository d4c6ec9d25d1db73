"""The 200-row pruning batch ranks rows by source time, ignoring a last use (the cutoff still
reads it)."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m220-prune-ranks-by-source-time", __doc__ or "",
                ("p1.ret.batch-order[last-use-before-source-time]",))


def factory() -> ReferenceAdapter:
    patch(retention, "PRUNE_ORDER", "source_updated_at ASC, thread_id ASC")
    return ReferenceAdapter()

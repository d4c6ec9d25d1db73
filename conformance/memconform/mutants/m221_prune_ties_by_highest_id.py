"""The 200-row pruning batch breaks a tie on both times by the highest thread id first."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter
from memref.selection import RECENCY

MUTANT = Mutant("m221-prune-ties-by-highest-id", __doc__ or "",
                ("p1.ret.batch-order[tie-broken-by-thread-id]",))


def factory() -> ReferenceAdapter:
    patch(retention, "PRUNE_ORDER", f"{RECENCY} ASC, source_updated_at ASC, thread_id DESC")
    return ReferenceAdapter()

"""The 200-row pruning batch breaks ties on last use by thread id alone, skipping the source
time."""

from memconform.mutants import Mutant, patch
from memref import retention
from memref.adapter import ReferenceAdapter
from memref.selection import RECENCY

MUTANT = Mutant("m219-prune-ties-skip-source-time", __doc__ or "",
                ("p1.ret.batch-order[tie-broken-by-source-time]",))


def factory() -> ReferenceAdapter:
    patch(retention, "PRUNE_ORDER", f"{RECENCY} ASC, thread_id ASC")
    return ReferenceAdapter()

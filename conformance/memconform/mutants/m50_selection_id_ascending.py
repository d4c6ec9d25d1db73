"""Full ties in the Phase-2 ranking go to the lower thread id instead of the higher one."""

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m50-selection-id-ascending", __doc__ or "",
                ("p2.sel.select[thread-id-breaks-full-ties]",))


def factory() -> ReferenceAdapter:
    patch(selection, "RANK", selection.RANK.replace("thread_id DESC", "thread_id ASC"))
    return ReferenceAdapter()

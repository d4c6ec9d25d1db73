"""The unused window is judged by source time only, never by the last use."""

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m72-window-ignores-last-use", __doc__ or "",
                ("p2.sel.select[stale-use-drops-fresh-unused-stays]",))


def factory() -> ReferenceAdapter:
    patch(selection, "ELIGIBLE", selection.ELIGIBLE.replace(f"{selection.RECENCY} >=",
                                                            "source_updated_at >="))
    return ReferenceAdapter()

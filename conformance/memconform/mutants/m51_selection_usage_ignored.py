"""The Phase-2 ranking ignores usage_count and ranks by recency alone."""

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m51-selection-usage-ignored", __doc__ or "",
                ("p2.sel.select[usage-beats-recency]",))


def factory() -> ReferenceAdapter:
    patch(selection, "RANK", selection.RANK.replace("COALESCE(usage_count, 0) DESC, ", ""))
    return ReferenceAdapter()

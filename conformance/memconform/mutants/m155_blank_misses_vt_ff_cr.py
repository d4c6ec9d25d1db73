"""Selection treats only space, TAB and LF as blank: a payload of VT, FF and CR counts as
text, so such a memory is selected."""

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m155-blank-misses-vt-ff-cr", __doc__ or "",
                ("p2.sel.select[ascii-whitespace-set-excluded]",))
BLANK = "' ' || char(9, 10)"


def factory() -> ReferenceAdapter:
    patch(selection, "ELIGIBLE",
          f"(length(trim(raw_memory, {BLANK})) > 0 OR length(trim(rollout_summary, {BLANK}))"
          f" > 0) AND {selection.RECENCY} >= :cutoff")
    return ReferenceAdapter()

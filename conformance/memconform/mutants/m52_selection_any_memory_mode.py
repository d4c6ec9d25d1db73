"""Phase 2 selects outputs of disabled and polluted threads too."""

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m52-selection-any-memory-mode", __doc__ or "",
                ("p2.sel.select[disabled-thread-takes-no-slot]",
                 "p2.sel.select[polluted-thread-takes-no-slot]"))


def factory() -> ReferenceAdapter:
    patch(selection, "ENABLED", "1 = 1")
    return ReferenceAdapter()

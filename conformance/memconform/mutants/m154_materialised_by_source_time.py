"""The selection is materialised oldest source time first instead of in ascending byte order
of the thread ids (the two agree whenever ids are v7 ids minted at their source time)."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase2, selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m154-materialised-by-source-time", __doc__ or "",
                ("p2.sel.select[id-order-not-time-order]",))
_select = selection.select


def select(*args: Any, **kwargs: Any) -> list[selection.Selected]:
    return sorted(_select(*args, **kwargs), key=lambda s: s.source_updated_at)


def factory() -> ReferenceAdapter:
    patch(phase2, "select", select)
    return ReferenceAdapter()

"""The selection is materialised in rank order instead of ascending thread-id order."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase2, selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m53-raw-memories-rank-order", __doc__ or "",
                ("p2.fs.raw-memories", "p2.sel.select[usage-beats-recency]"))
_select = selection.select


def select(*args: Any, **kwargs: Any) -> list[selection.Selected]:
    return sorted(_select(*args, **kwargs), key=lambda s: s.source_updated_at, reverse=True)


def factory() -> ReferenceAdapter:
    patch(phase2, "select", select)
    return ReferenceAdapter()

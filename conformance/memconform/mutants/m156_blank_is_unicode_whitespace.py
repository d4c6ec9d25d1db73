"""Selection treats any Unicode white space as blank: a memory whose payloads are only NBSP,
U+3000 or U+2028 (and ASCII white space) is not selected."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase2, selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m156-blank-is-unicode-whitespace", __doc__ or "",
                ("p2.sel.select[non-ascii-whitespace-stays-eligible]",
                 "p2.fs.raw-memories-unicode-trim"))
_select = selection.select


def select(*args: Any, **kwargs: Any) -> list[selection.Selected]:
    return [s for s in _select(*args, **kwargs) if s.raw_memory.strip() or
            s.rollout_summary.strip()]


def factory() -> ReferenceAdapter:
    patch(phase2, "select", select)
    return ReferenceAdapter()

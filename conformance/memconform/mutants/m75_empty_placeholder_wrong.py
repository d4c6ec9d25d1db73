"""With nothing selected, raw_memories.md is written as a bare heading."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m75-empty-placeholder-wrong", __doc__ or "",
                ("p2.fs.raw-memories-empty", "p2.sel.select[nothing-to-select]"))


def factory() -> ReferenceAdapter:
    patch(materialize, "EMPTY_RAW_MEMORIES", "# Raw Memories\n")
    return ReferenceAdapter()

"""Citation blocks are split with str.splitlines (vertical tab and friends split lines)."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m80-splitlines", __doc__ or "",
                ("read.cite.entries[vertical-tab-does-not-split-lines]",))


def factory() -> ReferenceAdapter:
    patch(citations, "rust_lines", lambda block: block.splitlines())
    return ReferenceAdapter()

"""Citation lines and their parts are trimmed with Python's bare str.strip(), which also removes
the information separators U+001C to U+001F (not Unicode white space)."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m142-python-strip-trims-separators", __doc__ or "",
                ("read.cite.entries[entry-trimmed-of-unicode-white-space-only]",
                 "read.cite.turn[entry-trimmed-of-unicode-white-space-only]"))


def factory() -> ReferenceAdapter:
    # str.strip(None) is the bare strip()
    patch(citations, "WHITESPACE", None)
    return ReferenceAdapter()

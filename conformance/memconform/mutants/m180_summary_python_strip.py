"""The injected summary is trimmed with Python's str.strip(), which also drops the information
separators U+001C-U+001F that Unicode does not count as white space."""

from memconform.mutants import Mutant, patch
from memref import injection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m180-summary-python-strip", __doc__ or "",
                ("read.inj.summary[information-separators-kept]",
                 "read.inj.summary[information-separators-only-injected]"))


def factory() -> ReferenceAdapter:
    patch(injection, "WHITESPACE", None)
    return ReferenceAdapter()

"""search ignores case unless told otherwise."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import search

MUTANT = Mutant("m99-search-ignores-case-by-default", __doc__ or "",
                ("read.tool.search[case-sensitive-by-default]",))
_matcher = search.matcher


def factory() -> ReferenceAdapter:
    patch(search, "matcher", lambda queries, case_sensitive, normalized: _matcher(
        queries, False if case_sensitive is True else case_sensitive, normalized))
    return ReferenceAdapter()

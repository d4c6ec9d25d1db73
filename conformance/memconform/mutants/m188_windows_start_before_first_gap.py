"""`all_within_lines` only starts windows before the first line that matches no query: a file
whose first line matches nothing has no window at all."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import search

MUTANT = Mutant("m188-windows-start-before-first-gap", __doc__ or "",
                ("read.tool.search[windows-after-a-non-matching-first-line]",
                 "read.tool.search[windows-one-line-too-short]"))
_windows = search.windows


def windows(flags: list[list[bool]], span: int) -> list[tuple[int, int]]:
    gap = next((i for i, hits in enumerate(flags) if not any(hits)), len(flags))
    return [(start, end) for start, end in _windows(flags, span) if start < gap]


def factory() -> ReferenceAdapter:
    patch(search, "windows", windows)
    return ReferenceAdapter()

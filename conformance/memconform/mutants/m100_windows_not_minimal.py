"""all_within_lines keeps windows that contain other windows."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import search

MUTANT = Mutant("m100-windows-not-minimal", __doc__ or "",
                ("read.tool.search[window-holding-another-is-dropped]",))


def windows(flags: list[list[bool]], span: int) -> list[tuple[int, int]]:
    found = []
    for start, first in enumerate(flags):
        covered = list(first)
        for end in range(start, min(start + span, len(flags))):
            covered = [a or b for a, b in zip(covered, flags[end], strict=True)]
            if any(first) and all(covered):
                found.append((start, end))
                break
    return found


def factory() -> ReferenceAdapter:
    patch(search, "windows", windows)
    return ReferenceAdapter()

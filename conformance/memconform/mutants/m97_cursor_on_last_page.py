"""The last page still carries a next cursor (pointing at the end)."""

from typing import TypeVar

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import listing, search

MUTANT = Mutant("m97-cursor-on-last-page", __doc__ or "",
                ("read.tool.list[last-page]", "read.tool.search[second-page]"))
T = TypeVar("T")


def page(items: list[T], cursor: int, limit: int) -> tuple[list[T], str | None]:
    end = min(cursor + limit, len(items))
    return items[cursor:end], str(end)


def factory() -> ReferenceAdapter:
    patch(listing, "page", page)
    patch(search, "page", page)
    return ReferenceAdapter()

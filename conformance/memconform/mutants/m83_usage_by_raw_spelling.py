"""Cited ids are looked up as written, not in canonical form."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m83-usage-by-raw-spelling", __doc__ or "",
                ("read.usage.writeback[simple-spelling-matches]",
                 "read.usage.writeback[two-spellings-count-twice]"))
_thread_id = citations.thread_id


def factory() -> ReferenceAdapter:
    patch(citations, "thread_id", lambda raw: raw if _thread_id(raw) is not None else None)
    return ReferenceAdapter()

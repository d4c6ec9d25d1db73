"""The legacy <thread_ids> block is read before <rollout_ids>."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m76-thread-ids-preferred", __doc__ or "",
                ("read.cite.blocks[rollout-ids-win-over-thread-ids]",))
_block = citations._block


def block(body: str, tag: str) -> str | None:
    if tag == "rollout_ids":
        legacy = _block(body, "thread_ids")
        if legacy is not None:
            return legacy
    return _block(body, tag)


def factory() -> ReferenceAdapter:
    patch(citations, "_block", block)
    return ReferenceAdapter()

"""A citation span runs to the last close tag, so nested-looking wrappers swallow more text."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m81-citation-ends-at-last-close", __doc__ or "",
                ("read.cite.blocks[nested-wrappers-do-not-nest]",))


def strip_citations(text: str) -> tuple[str, list[str]]:
    start = text.find(citations.OPEN)
    if start == -1:
        return text, []
    end = text.rfind(citations.CLOSE)
    if end < start:
        return text[:start], [text[start + len(citations.OPEN):]]
    body = text[start + len(citations.OPEN):end]
    return text[:start] + text[end + len(citations.CLOSE):], [body]


def factory() -> ReferenceAdapter:
    patch(citations, "strip_citations", strip_citations)
    return ReferenceAdapter()

"""Citation blocks count without the `<oai-mem-citation>` wrapper: a message with a bare
`<rollout_ids>` block is parsed as if wrapped."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m104-bare-citation-blocks", __doc__ or "",
                ("read.cite.blocks[bare-block-not-parsed-or-stripped]",))
_strip = citations.strip_citations


def strip_citations(text: str) -> tuple[str, list[str]]:
    visible, bodies = _strip(text)
    return visible, bodies or [text]


def factory() -> ReferenceAdapter:
    patch(citations, "strip_citations", strip_citations)
    return ReferenceAdapter()

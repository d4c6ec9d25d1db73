"""Thread ids are validated with Python's lenient uuid parser (hyphens anywhere)."""

import re

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m79-lenient-uuid-parse", __doc__ or "",
                ("read.cite.blocks[odd-hyphens-rejected]",))


def factory() -> ReferenceAdapter:
    patch(citations, "UUID_TEXT", re.compile(r"(?:urn:uuid:|\{)?[0-9a-fA-F-]{32,40}\}?"))
    return ReferenceAdapter()

"""Only the hyphenated UUID spelling is accepted as a thread id."""

import re

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m78-braced-uuids-rejected", __doc__ or "",
                ("read.cite.blocks[braced-urn-simple-accepted]",))


def factory() -> ReferenceAdapter:
    hyphenated = r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
    patch(citations, "UUID_TEXT", re.compile(hyphenated))
    return ReferenceAdapter()

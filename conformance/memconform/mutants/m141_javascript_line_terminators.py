"""Citation blocks are split at every JavaScript line terminator (LF, CR, CRLF, U+2028, U+2029),
not at LF only."""

import re

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m141-javascript-line-terminators", __doc__ or "",
                ("read.cite.entries[entry-no-split-inside-a-line]",
                 "read.cite.turn[entry-no-split-inside-a-line]"))


def lines(block: str) -> list[str]:
    parts = re.split("\r\n|[\n\r\u2028\u2029]", block)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def factory() -> ReferenceAdapter:
    patch(citations, "rust_lines", lines)
    return ReferenceAdapter()

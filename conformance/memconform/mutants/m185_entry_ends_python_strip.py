"""A citation entry line, its path and its note are trimmed at their ends with Python's bare
str.strip(), which also removes the information separators U+001C to U+001F (not Unicode
white space)."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m185-entry-ends-python-strip", __doc__ or "",
                ("read.cite.entries[entry-separators-kept-at-the-ends]",
                 "read.cite.turn[entry-separators-kept-at-the-ends]"))
_parse_entry = citations.parse_entry


def parse_entry(line: str) -> citations.Entry | None:
    entry = _parse_entry(line.strip())
    if entry is None:
        return None
    return citations.Entry(entry.path.strip(), entry.line_start, entry.line_end,
                           entry.note.strip())


def factory() -> ReferenceAdapter:
    patch(citations, "parse_entry", parse_entry)
    return ReferenceAdapter()

"""A citation entry line with no `path:` part (`5-7|note=[x]`) is read as a bare range with an
empty path instead of being dropped."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m186-entry-without-path-kept", __doc__ or "",
                ("read.cite.entries[entry-malformed-locations-dropped]",
                 "read.cite.turn[entry-malformed-locations-dropped]"))
_parse_entry = citations.parse_entry


def parse_entry(line: str) -> citations.Entry | None:
    entry = _parse_entry(line)
    location = line.strip(citations.WHITESPACE).rpartition(citations.NOTE_SEP)[0]
    if entry is None and location and ":" not in location:
        # the missing path is taken as empty
        entry = _parse_entry(":" + line.strip(citations.WHITESPACE))
    return entry


def factory() -> ReferenceAdapter:
    patch(citations, "parse_entry", parse_entry)
    return ReferenceAdapter()

"""Note names are checked for shape but not for the slug's characters."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import notes

MUTANT = Mutant("m106-note-slug-unchecked", __doc__ or "",
                ("read.tool.note[uppercase-slug-refused]", "read.tool.fuzz.add_ad_hoc_note"))


def factory() -> ReferenceAdapter:
    patch(notes, "SLUG_BYTES", frozenset(range(256)) - {ord("/")})
    return ReferenceAdapter()

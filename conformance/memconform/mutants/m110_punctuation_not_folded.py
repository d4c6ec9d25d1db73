"""apply_patch matches context lines exactly or up to whitespace only: typographic dashes,
quotes and non-breaking spaces in the file no longer match their ASCII spelling."""

from memconform.mutants import Mutant, patch
from memref import patch as patching
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m110-punctuation-not-folded", __doc__ or "",
                ("p2.patch.case[em-dash-in-file]", "p2.patch.case[en-dash-removed]",
                 "p2.patch.case[curly-quotes]", "p2.patch.case[nbsp]",
                 "p2.patch.case[typographic-in-patch]", "p2.patch.case[punctuation-in-header]"))


def factory() -> ReferenceAdapter:
    patch(patching, "MATCHERS", tuple(m for m in patching.MATCHERS if m is not patching.folded))
    return ReferenceAdapter()

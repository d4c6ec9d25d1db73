"""The slug goes into the summary file name as the model wrote it."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m55-slug-unsanitized", __doc__ or "",
                ("p2.fs.stem[leading-space-kept-as-underscore]",
                 "p2.fs.stem[trailing-underscores-stripped]"))


def factory() -> ReferenceAdapter:
    patch(materialize, "sanitize_slug", lambda slug: slug[:materialize.SLUG_MAX])
    return ReferenceAdapter()

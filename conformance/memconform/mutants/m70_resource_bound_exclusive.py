"""A resource dated exactly seven days ago is kept (the bound is treated as exclusive)."""

from memconform.mutants import Mutant, patch
from memref import extensions
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m70-resource-bound-exclusive", __doc__ or "",
                ("p2.ext.retention-bound[exactly-seven-days]",))


def factory() -> ReferenceAdapter:
    patch(extensions, "RESOURCE_RETENTION_S", extensions.RESOURCE_RETENTION_S + 1)
    return ReferenceAdapter()

"""Dated extension resources are never retired."""

from memconform.mutants import Mutant, patch
from memref import phase2
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m69-resources-never-pruned", __doc__ or "",
                ("p2.ext.retention[eight-days-old]",))


def factory() -> ReferenceAdapter:
    patch(phase2, "prune_resources", lambda root, now: [])
    return ReferenceAdapter()

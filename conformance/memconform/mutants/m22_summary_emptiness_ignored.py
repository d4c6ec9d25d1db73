"""Only an empty raw_memory forgets; an empty rollout_summary is stored."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.stage1_output import StageOneOutput

MUTANT = Mutant("m22-summary-emptiness-ignored", __doc__ or "",
                ("p1.empty.forget[empty-summary]",))


def factory() -> ReferenceAdapter:
    patch(StageOneOutput, "is_empty", property(lambda self: not self.raw_memory.strip()))
    return ReferenceAdapter()

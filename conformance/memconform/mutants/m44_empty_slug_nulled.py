"""An empty rollout_slug is stored as NULL instead of as returned."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.stage1_output import StageOneOutput

MUTANT = Mutant("m44-empty-slug-nulled", __doc__ or "", ("p1.out.slug[empty]",))
_original = StageOneOutput.redacted


def _nulled(self: StageOneOutput) -> StageOneOutput:
    out = _original(self)
    return StageOneOutput(out.raw_memory, out.rollout_summary, out.rollout_slug or None)


def factory() -> ReferenceAdapter:
    patch(StageOneOutput, "redacted", _nulled)
    return ReferenceAdapter()

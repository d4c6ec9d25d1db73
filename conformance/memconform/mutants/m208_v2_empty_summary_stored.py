"""Layout v2 stores an answer with an empty summary instead of forgetting the thread."""

from memconform.mutants import Mutant, patch
from memref import releases, stage1_output
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m208-v2-empty-summary-stored", __doc__ or "", ("p1.v2.forget[slug]",))


def factory() -> ReferenceAdapter:
    patch(stage1_output.StageOneOutput, "is_empty_v2", property(lambda self: False))
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

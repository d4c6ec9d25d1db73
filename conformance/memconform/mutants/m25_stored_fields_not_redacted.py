"""The model's answer is stored without redaction."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.stage1_output import StageOneOutput

MUTANT = Mutant("m25-stored-fields-not-redacted", __doc__ or "",
                ("p1.red.stored.codex", "p1.red.leak-scan.codex"))


def factory() -> ReferenceAdapter:
    patch(StageOneOutput, "redacted", lambda self: self)
    return ReferenceAdapter()

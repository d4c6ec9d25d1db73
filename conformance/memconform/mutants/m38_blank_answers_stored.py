"""Whitespace-only answers are stored, as the Codex 0.144.6 binary does."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.stage1_output import StageOneOutput

MUTANT = Mutant("m38-blank-answers-stored", __doc__ or "", ("p1.empty.blank",))


def factory() -> ReferenceAdapter:
    patch(StageOneOutput, "is_empty",
          property(lambda self: self.raw_memory == "" or self.rollout_summary == ""))
    return ReferenceAdapter()

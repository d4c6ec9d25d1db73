"""The completion watermark is the newest selected source time, ignoring the claimed one."""

from memconform.mutants import Mutant, patch
from memref import phase2
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m68-watermark-ignores-claim", __doc__ or "",
                ("p2.run.completion-watermark[claimed-is-higher]",
                 "p2.run.completion-watermark[empty-selection-keeps-claimed]"))


def factory() -> ReferenceAdapter:
    patch(phase2, "completion_watermark",
          lambda claimed, selected: max([0] + [s.source_updated_at for s in selected]))
    return ReferenceAdapter()

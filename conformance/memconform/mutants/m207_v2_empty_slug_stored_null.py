"""Layout v2 stores an empty slug as NULL."""

from memconform.mutants import Mutant, patch
from memref import phase1, releases, stage1_output
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m207-v2-empty-slug-stored-null", __doc__ or "", ("p1.v2.stored[empty-slug]",))


def parse_v2(text: str) -> stage1_output.StageOneOutput:
    parsed = stage1_output.parse_v2(text)
    return stage1_output.StageOneOutput(parsed.raw_memory, parsed.rollout_summary,
                                        parsed.rollout_slug or None)


def factory() -> ReferenceAdapter:
    patch(phase1, "parse_v2", parse_v2)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

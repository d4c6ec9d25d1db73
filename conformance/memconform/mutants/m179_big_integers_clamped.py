"""An integer outside the signed 64-bit range is clamped like any other value instead of
being refused (a parser with arbitrary-size integers)."""

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m179-big-integers-clamped", __doc__ or "", ("config.rejected[int-outside-i64]",))


def factory() -> ReferenceAdapter:
    patch(config, "I64_MIN", -(2**200))
    patch(config, "I64_MAX", 2**200)
    return ReferenceAdapter()

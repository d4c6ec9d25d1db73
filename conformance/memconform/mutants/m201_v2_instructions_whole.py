"""Layout v2 injects the memory instructions as one piece, however long."""

from memconform.mutants import Mutant, patch
from memref import injection, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m201-v2-instructions-whole", __doc__ or "", ("read.v2.pieces",))


def factory() -> ReferenceAdapter:
    patch(injection, "split_bytes", lambda text, limit: [text])
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

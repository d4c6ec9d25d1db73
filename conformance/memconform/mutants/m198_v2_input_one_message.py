"""Layout v2 sends the whole extraction input as one user message, however long."""

from memconform.mutants import Mutant, patch
from memref import phase1, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m198-v2-input-one-message", __doc__ or "", ("p1.v2.request",))


def factory() -> ReferenceAdapter:
    patch(phase1, "split_bytes", lambda text, limit: [text])
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

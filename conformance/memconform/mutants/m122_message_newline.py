"""The baseline commit message ends with a newline after the co-author trailer."""

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m122-message-newline", __doc__ or "", ("p2.git.message-bytes",))


def factory() -> ReferenceAdapter:
    patch(workspace, "TRAILER", workspace.TRAILER + "\n")
    return ReferenceAdapter()

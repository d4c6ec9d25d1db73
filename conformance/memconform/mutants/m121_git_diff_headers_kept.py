"""The workspace diff keeps git's `index` lines and the function context after each hunk
header."""

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m121-git-diff-headers-kept", __doc__ or "", ("p2.diff.plain-headers",))


def factory() -> ReferenceAdapter:
    patch(workspace, "_plain_headers", lambda text: text)
    return ReferenceAdapter()

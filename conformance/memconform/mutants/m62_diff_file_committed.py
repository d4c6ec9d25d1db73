"""The diff file is left in the root and committed into the new baseline."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m62-diff-file-committed", __doc__ or "", ("p2.git.clean-after-success",))


def reset(root: Path, now: int) -> None:
    workspace._commit_baseline(root, now)


def factory() -> ReferenceAdapter:
    patch(workspace, "reset", reset)
    return ReferenceAdapter()

"""A success commits on top of the old baseline instead of starting a fresh one-commit history."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m61-history-kept", __doc__ or "", ("p2.git.history-reset",))


def reset(root: Path, now: int) -> None:
    (root / workspace.DIFF_FILE).unlink(missing_ok=True)
    workspace._git(root, "add", "--all", "--force")
    workspace._git(root, "commit", "-q", "--allow-empty", "--no-verify", "-m",
                   workspace.MESSAGE, "-m", workspace.TRAILER, now=now)


def factory() -> ReferenceAdapter:
    patch(workspace, "reset", reset)
    return ReferenceAdapter()

"""An unchanged workspace still starts a consolidation agent."""

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m59-no-change-still-runs-agent", __doc__ or "",
                ("p2.run.no-change", "p2.diff.stale-file-removed"))


def factory() -> ReferenceAdapter:
    patch(workspace.Diff, "has_changes", property(lambda self: True))
    return ReferenceAdapter()

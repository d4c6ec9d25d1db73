"""The workspace diff's changes are sorted folder by folder (by the tuple of path components)
instead of by the bytes of the whole path, so a/b.md comes before a-x.md."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m159-status-sorted-by-components", __doc__ or "",
                ("p2.diff.sorted-bytes",))
_diff = workspace.diff


def diff(root: Path) -> workspace.Diff:
    found = _diff(root)
    order = sorted(found.changes, key=lambda c: [p.encode("utf-8") for p in c[1].split("/")])
    return workspace.Diff(order, found.text)


def factory() -> ReferenceAdapter:
    patch(workspace, "diff", diff)
    return ReferenceAdapter()

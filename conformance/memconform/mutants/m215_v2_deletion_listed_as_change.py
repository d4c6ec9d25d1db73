"""Following Codex 0.171.0 in layout v2, the diff file's status list marks a deleted file as
modified (`M`) instead of deleted (`D`)."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import releases, workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m215-v2-deletion-listed-as-change", __doc__ or "", ("p2.v2.diff-snapshot",))


def factory() -> ReferenceAdapter:
    original = workspace.diff

    def diff(root: Path) -> workspace.Diff:
        found = original(root)
        return workspace.Diff([("M" if status == "D" else status, path)
                               for status, path in found.changes], found.text)

    patch(workspace, "diff", diff)
    return ReferenceAdapter(releases.get("0.171.0"), layout="v2")

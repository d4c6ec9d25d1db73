"""Following Codex 0.155.0, an unchanged workspace is a no-change success whatever the
artifacts in the root (as in 0.144.6, which does not check them)."""

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m212-unchanged-invalid-artifacts-no-agent", __doc__ or "",
                ("p2.run.unchanged-invalid-artifacts[invalid-artifacts]",))


def factory() -> ReferenceAdapter:
    patch(phase2, "needs_agent", lambda changes, root, config: changes.has_changes)
    return ReferenceAdapter(releases.get("0.155.0"))

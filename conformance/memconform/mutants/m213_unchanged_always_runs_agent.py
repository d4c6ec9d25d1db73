"""Following Codex 0.155.0, every run starts the agent, also on an unchanged workspace whose
artifacts are valid."""

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m213-unchanged-always-runs-agent", __doc__ or "",
                ("p2.run.unchanged-invalid-artifacts[valid-artifacts]",))


def factory() -> ReferenceAdapter:
    patch(phase2, "needs_agent", lambda changes, root, config: True)
    return ReferenceAdapter(releases.get("0.155.0"))

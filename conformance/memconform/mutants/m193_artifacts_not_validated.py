"""Following Codex 0.155.0, the agent's artifacts are not checked: any run whose agent
finishes is a success (as in 0.144.6)."""

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m193-artifacts-not-validated", __doc__ or "",
                ("p2.run.invalid-artifacts[nothing-written]",
                 "p2.run.invalid-artifacts[summary-v1-trailing-space]"))


def factory() -> ReferenceAdapter:
    patch(phase2, "artifacts_problem", lambda root, layout="v1": None)
    return ReferenceAdapter(releases.get("0.155.0"))

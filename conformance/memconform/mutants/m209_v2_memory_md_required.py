"""Layout v2 still requires MEMORY.md, as layout v1 does."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m209-v2-memory-md-required", __doc__ or "", ("p2.v2.artifacts[valid]",))
_original = phase2.artifacts_problem


def artifacts_problem(root: Path, layout: str = "v1") -> str | None:
    if not (root / "MEMORY.md").is_file():
        return "MEMORY.md is missing"
    return _original(root, layout)


def factory() -> ReferenceAdapter:
    patch(phase2, "artifacts_problem", artifacts_problem)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

"""Layout v2 accepts a memory_summary.md of exactly 10,000 bytes (the limit read as "at
most")."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m196-v2-summary-limit-inclusive", __doc__ or "",
                ("p2.v2.artifacts[ascii-10000-bytes]", "p2.v2.artifacts[multibyte-10000-bytes]"))
_original = phase2.artifacts_problem


def artifacts_problem(root: Path, layout: str = "v1") -> str | None:
    problem = _original(root, layout)
    if problem and "bytes" in problem and (root / "memory_summary.md").stat().st_size == 10_000:
        return None
    return problem


def factory() -> ReferenceAdapter:
    patch(phase2, "artifacts_problem", artifacts_problem)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

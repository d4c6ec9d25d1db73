"""Layout v2 matches the summary's section headings without regard to letter case."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m197-v2-headings-any-case", __doc__ or "",
                ("p2.v2.artifacts[heading-lower-case]",))
_original = phase2.artifacts_problem


def artifacts_problem(root: Path, layout: str = "v1") -> str | None:
    problem = _original(root, layout)
    if problem is None or "has no line" not in problem:
        return problem
    text = (root / "memory_summary.md").read_text(encoding="utf-8", errors="replace")
    present = {line.strip().lower() for line in text.splitlines()}
    missing = [h for h in phase2.SUMMARY_HEADINGS_V2 if h.lower() not in present]
    return f"memory_summary.md has no line {missing[0]!r}" if missing else None


def factory() -> ReferenceAdapter:
    patch(phase2, "artifacts_problem", artifacts_problem)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

"""Following Codex 0.155.0, the summary's first line is compared after trimming blanks, so
`v1 ` passes."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m194-artifacts-first-line-stripped", __doc__ or "",
                ("p2.run.invalid-artifacts[summary-v1-trailing-space]",))


def _lenient(root: Path, layout: str = "v1") -> str | None:
    if not (root / "MEMORY.md").is_file():
        return "MEMORY.md is missing"
    summary = root / "memory_summary.md"
    if not summary.is_file():
        return "memory_summary.md is missing"
    lines = summary.read_text(encoding="utf-8").splitlines()
    return None if lines and lines[0].strip() == "v1" else "no v1 line"


def factory() -> ReferenceAdapter:
    patch(phase2, "artifacts_problem", _lenient)
    return ReferenceAdapter(releases.get("0.155.0"))

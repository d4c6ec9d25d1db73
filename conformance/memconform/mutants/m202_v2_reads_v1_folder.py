"""Layout v2 falls back to the v1 folder's memory_summary.md when its own has none."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import injection, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m202-v2-reads-v1-folder", __doc__ or "", ("read.v2.own-root",))
_original = injection.read_summary


def read_summary(root: Path) -> str | None:
    return _original(root) or _original(root.parent / "memories")


def factory() -> ReferenceAdapter:
    patch(injection, "read_summary", read_summary)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

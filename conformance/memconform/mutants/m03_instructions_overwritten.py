"""Seeding rewrites extensions/ad_hoc/instructions.md even when the user edited it."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import extensions, startup
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m03-instructions-overwritten", __doc__ or "", ("startup.ext.not-overwritten",))


def _seed(root: Path) -> bool:
    target = root / extensions.AD_HOC_DIR / "instructions.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(extensions.AD_HOC_INSTRUCTIONS, encoding="utf-8")
    return True


def factory() -> ReferenceAdapter:
    patch(startup, "seed_ad_hoc_instructions", _seed)
    return ReferenceAdapter()

"""The agent's apply_patch follows symbolic links inside the memory root."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import patch as patching
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m66-symlinks-followed", __doc__ or "", ("p2.agent.confined[symlinked-dir]",))
_confined = patching.confined


def confined(root: Path, rel: str) -> Path:
    try:
        return _confined(root, rel)
    except patching.PatchError as exc:
        if "symlink" in str(exc):
            return root / rel
        raise


def factory() -> ReferenceAdapter:
    patch(patching, "confined", confined)
    return ReferenceAdapter()

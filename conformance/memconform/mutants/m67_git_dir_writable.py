"""The agent's apply_patch may write inside the memory root's .git directory."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import patch as patching
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m67-git-dir-writable", __doc__ or "", ("p2.agent.confined[git-dir]",))
_confined = patching.confined


def confined(root: Path, rel: str) -> Path:
    try:
        return _confined(root, rel)
    except patching.PatchError as exc:
        if ".git" in str(exc):
            return root / rel
        raise


def factory() -> ReferenceAdapter:
    patch(patching, "confined", confined)
    return ReferenceAdapter()

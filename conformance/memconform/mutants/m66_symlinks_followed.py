"""The agent's apply_patch follows symbolic links inside the memory root."""

from memconform.mutants import Mutant, waive_refusal
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m66-symlinks-followed", __doc__ or "", ("p2.agent.confined[symlinked-dir]",))


def factory() -> ReferenceAdapter:
    waive_refusal("symlink")
    return ReferenceAdapter()

"""The agent's apply_patch may write inside the memory root's .git directory."""

from memconform.mutants import Mutant, waive_refusal
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m67-git-dir-writable", __doc__ or "", ("p2.agent.confined[git-dir]",))


def factory() -> ReferenceAdapter:
    waive_refusal(".git")
    return ReferenceAdapter()

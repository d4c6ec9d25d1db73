"""A negative max_rollouts_per_startup or max_raw_memories_for_consolidation is clamped to 1
like a negative signed setting, instead of being refused."""

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m178-unsigned-negatives-clamped", __doc__ or "",
                ("config.rejected[unsigned-per-startup-negative]",
                 "config.rejected[unsigned-raw-memories-negative]"))


def factory() -> ReferenceAdapter:
    patch(config, "UNSIGNED_KEYS", frozenset())
    return ReferenceAdapter()

"""min_rollout_idle_hours keeps 0 instead of clamping it up to 1."""

from memconform.mutants import Mutant
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m01-idle-hours-unclamped", __doc__ or "",
                ("config.clamp[min_rollout_idle_hours-zero]",))


def factory() -> ReferenceAdapter:
    config.INT_KEYS["min_rollout_idle_hours"] = (6, 0, 48)
    return ReferenceAdapter()

"""An integer [memories] setting of 0 is read as unset and takes its default, even where 0 is
inside the allowed range (age days, unused days, rate-limit percent)."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m177-zero-means-default", __doc__ or "",
                ("config.clamp[max_rollout_age_days-at-low-bound]",
                 "config.clamp[max_unused_days-at-low-bound]",
                 "config.clamp[min_rate_limit_remaining_percent-at-low-bound]"))
_original = config._memories


def _memories(table: dict[str, Any], source: str, *rest: Any) -> config.MemoriesConfig:
    # the bug: `value or default`
    return _original({k: v for k, v in table.items()
                      if not (k in config.INT_KEYS and v == 0 and not isinstance(v, bool))},
                     source, *rest)


def factory() -> ReferenceAdapter:
    patch(config, "_memories", _memories)
    return ReferenceAdapter()

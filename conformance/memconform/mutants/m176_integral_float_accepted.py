"""An integral float such as 1.0 is accepted for an integer [memories] setting (1.5 is still
refused)."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m176-integral-float-accepted", __doc__ or "",
                ("config.rejected[int-as-integral-float]",))
_original = config._memories


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _memories(table: dict[str, Any], source: str, *rest: Any) -> config.MemoriesConfig:
    return _original({k: _integral(v) if k in config.INT_KEYS else v
                      for k, v in table.items()}, source, *rest)


def factory() -> ReferenceAdapter:
    patch(config, "_memories", _memories)
    return ReferenceAdapter()

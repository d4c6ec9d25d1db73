"""Integer [memories] settings are read as 32-bit integers (wrapping) before they are
clamped, so a value near the i64 maximum lands on the low bound."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m175-settings-read-as-i32", __doc__ or "",
                tuple(f"config.clamp[{key}-i64-max]" for key in config.INT_KEYS))
_original = config._memories


def _wrap(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return (value + 2**31) % 2**32 - 2**31


def _memories(table: dict[str, Any], source: str, *rest: Any) -> config.MemoriesConfig:
    return _original({k: _wrap(v) if k in config.INT_KEYS else v for k, v in table.items()},
                     source, *rest)


def factory() -> ReferenceAdapter:
    patch(config, "_memories", _memories)
    return ReferenceAdapter()

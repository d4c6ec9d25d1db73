"""A memories.version that names no layout is ignored like an unknown key, not refused."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import config, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m206-bad-version-ignored", __doc__ or "",
                ("config.layout.rejected[version-unknown]",))
_original = config._memories


def _memories(table: dict[str, Any], source: str, *rest: Any) -> config.MemoriesConfig:
    kept = {k: v for k, v in table.items() if k != "version" or v in ("v1", "v2")}
    return _original(kept, source, *rest)


def factory() -> ReferenceAdapter:
    patch(config, "_memories", _memories)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

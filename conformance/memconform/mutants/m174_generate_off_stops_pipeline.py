"""With generate_memories = false the startup creates the memory root and the extension seed,
then stops: neither Phase 1 nor Phase 2 runs."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import guard, startup
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig

MUTANT = Mutant("m174-generate-off-stops-pipeline", __doc__ or "",
                ("startup.generate-off.pipeline-runs",))
_original = guard.rate_limits_ok


def _ok(home: Path, config: CodexConfig) -> bool:
    # the bug: the flag of new threads is read as a switch for the whole pipeline
    return config.memories.generate_memories and _original(home, config)


def factory() -> ReferenceAdapter:
    patch(startup, "rate_limits_ok", _ok)
    return ReferenceAdapter()

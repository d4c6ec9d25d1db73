"""An ephemeral session still runs the pipeline."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import startup
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig

MUTANT = Mutant("m02-ephemeral-runs", __doc__ or "", ("startup.guard.ephemeral",))
_original = startup.guard


def _guard(config: CodexConfig, session: startup.Session, home: Path) -> str | None:
    reason = _original(config, session, home)
    return None if reason == "ephemeral" and config.feature_memories else reason


def factory() -> ReferenceAdapter:
    patch(startup, "guard", _guard)
    return ReferenceAdapter()

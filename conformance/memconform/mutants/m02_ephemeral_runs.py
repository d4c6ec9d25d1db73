"""An ephemeral session still runs the pipeline."""

from memconform.mutants import Mutant
from memref import startup
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m02-ephemeral-runs", __doc__ or "", ("startup.guard.ephemeral",))
_original = startup.guard


def _guard(config: startup.CodexConfig, session: startup.Session, home: startup.Path
           ) -> str | None:
    reason = _original(config, session, home)
    return None if reason == "ephemeral" and config.feature_memories else reason


def factory() -> ReferenceAdapter:
    startup.guard = _guard
    return ReferenceAdapter()

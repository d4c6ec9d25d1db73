"""An ephemeral or feature-off startup prunes stale stage-1 outputs before it gives up."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import adapter, startup, store
from memref.config import load_config
from memref.releases import DEFAULT, Release
from memref.retention import prune_stage1_outputs
from memref.runtime import Runtime

MUTANT = Mutant("m172-exit-after-pruning", __doc__ or "",
                ("startup.guard.prunes-nothing[ephemeral]",
                 "startup.guard.prunes-nothing[feature-absent]",
                 "startup.guard.prunes-nothing[feature-false]"))
_original = startup.run_startup


def run_startup(home: Path, session: startup.Session, rt: Runtime,
                release: Release = DEFAULT, pin_version: str | None = None
                ) -> startup.StartupResult:
    config = load_config(home, release, pin_version)
    if startup.guard(config, session, home) is not None and config.layout.db(home).is_file():
        # the bug: retention is housekeeping done before the early-exit guards
        memories = store.memories_db(home, config)
        try:
            prune_stage1_outputs(memories, max_unused_days=config.memories.max_unused_days,
                                 now=rt.now)
        finally:
            memories.close()
    return _original(home, session, rt, release, pin_version)


def factory() -> adapter.ReferenceAdapter:
    patch(adapter, "run_startup", run_startup)
    return adapter.ReferenceAdapter()

"""A startup that the plan-usage guard skips still runs Phase 2 (only Phase 1 is skipped)."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import adapter, startup
from memref.config import load_config
from memref.phase2 import run_phase2
from memref.releases import DEFAULT, Release
from memref.runtime import Runtime

MUTANT = Mutant("m170-guard-skip-still-consolidates", __doc__ or "",
                ("p1.guard.skip-state[over-threshold-skips]",))
_original = startup.run_startup


def run_startup(home: Path, session: startup.Session, rt: Runtime,
                release: Release = DEFAULT, pin_version: str | None = None
                ) -> startup.StartupResult:
    result = _original(home, session, rt, release, pin_version)
    if result.skipped_reason == "rate_limited":
        # the bug: the guard's skip is read as "no extraction" rather than "no pipeline"
        config = load_config(home, release, pin_version)
        result.phase2 = run_phase2(home, startup.memory_root(home, config), config,
                                   session.thread_id, rt, session.env)
    return result


def factory() -> adapter.ReferenceAdapter:
    patch(adapter, "run_startup", run_startup)
    return adapter.ReferenceAdapter()

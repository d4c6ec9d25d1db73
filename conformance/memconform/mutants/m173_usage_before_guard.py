"""The plan usage is asked before the early-exit guards, so an ephemeral or feature-off
startup with a ChatGPT login still calls the usage endpoint."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import adapter, startup
from memref.config import load_config
from memref.guard import rate_limits_ok
from memref.releases import DEFAULT, Release
from memref.runtime import Runtime

MUTANT = Mutant("m173-usage-before-guard", __doc__ or "",
                ("startup.guard.no-usage-request[ephemeral]",
                 "startup.guard.no-usage-request[feature-absent]",
                 "startup.guard.no-usage-request[feature-false]"))
_original = startup.run_startup


def run_startup(home: Path, session: startup.Session, rt: Runtime,
                release: Release = DEFAULT, pin_version: str | None = None
                ) -> startup.StartupResult:
    config = load_config(home, release, pin_version)
    if startup.guard(config, session, home) is not None:
        rate_limits_ok(home, config)  # the bug: asked whatever the guards say
    return _original(home, session, rt, release, pin_version)


def factory() -> adapter.ReferenceAdapter:
    patch(adapter, "run_startup", run_startup)
    return adapter.ReferenceAdapter()

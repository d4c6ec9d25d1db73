"""Phase 2 prepares the git workspace before it claims the job: a startup whose claim is
skipped still removes the leftover diff file and commits a baseline (.git)."""

from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase2, startup, workspace
from memref.adapter import ReferenceAdapter
from memref.runtime import Runtime

MUTANT = Mutant("m150-prepare-before-claim", __doc__ or "",
                ("p2.run.skipped[backoff]", "p2.run.skipped[cooldown]",
                 "p2.run.skipped[live-lease]"))
_run_phase2 = phase2.run_phase2


def run_phase2(home: Path, root: Path, config: Any, session_thread: str, rt: Runtime,
               env: dict[str, str]) -> str:
    workspace.prepare(root, rt.now)
    return _run_phase2(home, root, config, session_thread, rt, env)


def factory() -> ReferenceAdapter:
    patch(startup, "run_phase2", run_phase2)
    return ReferenceAdapter()

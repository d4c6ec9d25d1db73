"""Every eligible thread is claimed, ignoring max_rollouts_per_startup."""

import dataclasses
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase1
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig
from memref.runtime import Runtime

MUTANT = Mutant("m34-per-startup-limit-ignored", __doc__ or "",
                ("p1.cand.select[default-two-per-startup]", "p1.cand.select[newest-first]"))
_original = phase1.claim_jobs


def _claim_all(home: Path, config: CodexConfig, session_thread: str,
               rt: Runtime) -> list[phase1.Job]:
    unlimited = dataclasses.replace(config, memories=dataclasses.replace(
        config.memories, max_rollouts_per_startup=128))
    return _original(home, unlimited, session_thread, rt)


def factory() -> ReferenceAdapter:
    patch(phase1, "claim_jobs", _claim_all)
    return ReferenceAdapter()

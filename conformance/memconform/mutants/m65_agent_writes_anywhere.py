"""The agent's apply_patch resolves paths without confining them to the memory root."""

import os
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import patch as patching
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m65-agent-writes-anywhere", __doc__ or "",
                ("p2.agent.confined[parent-dir]", "p2.agent.confined[absolute-home]",
                 "p2.agent.confined[session-cwd]"))


def target(self: patching._Plan, rel: str) -> tuple[Path, str]:
    return Path(os.path.normpath(self.root / rel)), rel


def factory() -> ReferenceAdapter:
    patch(patching._Plan, "target", target)
    return ReferenceAdapter()

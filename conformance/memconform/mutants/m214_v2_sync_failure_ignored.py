"""Following Codex 0.171.0 in layout v2, a summary that cannot be written is skipped and the
run goes on to the agent instead of failing."""

import contextlib
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import materialize, phase2, releases
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m214-v2-sync-failure-ignored", __doc__ or "", ("p2.v2.sync-failure",))


def factory() -> ReferenceAdapter:
    original = materialize.sync_inputs  # phase2 calls it by this name

    def sync_inputs(root: Path, selected: list[Selected], raw_memories: bool = True) -> None:
        with contextlib.suppress(OSError):
            original(root, selected, raw_memories)

    patch(phase2, "sync_inputs", sync_inputs)
    return ReferenceAdapter(releases.get("0.171.0"), layout="v2")

"""Layout v2 still writes raw_memories.md beside the rollout summaries."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import materialize, phase2, releases
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m195-v2-raw-memories-written", __doc__ or "", ("p2.v2.no-raw-memories",))


def sync_inputs(root: Path, selected: list[Selected], raw_memories: bool = True) -> None:
    materialize.sync_inputs(root, selected, True)


def factory() -> ReferenceAdapter:
    patch(phase2, "sync_inputs", sync_inputs)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

"""With nothing selected, MEMORY.md, memory_summary.md and skills/ are deleted."""

import shutil
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import materialize, phase2
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m71-outputs-cleared-when-empty", __doc__ or "", ("p2.fs.outputs-kept",))


def sync_inputs(root: Path, selected: list[Selected], raw_memories: bool = True) -> None:
    if not selected:
        for name in ("MEMORY.md", "memory_summary.md"):
            (root / name).unlink(missing_ok=True)
        shutil.rmtree(root / "skills", ignore_errors=True)
    materialize.sync_inputs(root, selected, raw_memories)


def factory() -> ReferenceAdapter:
    patch(phase2, "sync_inputs", sync_inputs)
    return ReferenceAdapter()

"""The selection is marked as soon as it is loaded, so a failed run leaves it marked."""

import sqlite3
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import phase2
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig
from memref.selection import Selected

MUTANT = Mutant("m64-marks-before-success", __doc__ or "", ("p2.run.sync-failure",))
_load = phase2._load


def load(home: Path, memories: sqlite3.Connection, config: CodexConfig, now: int
         ) -> list[Selected]:
    selected = _load(home, memories, config, now)
    memories.executemany("UPDATE stage1_outputs SET selected_for_phase2 = 1,"
                         " selected_for_phase2_source_updated_at = ? WHERE thread_id = ?",
                         [(s.source_updated_at, s.thread_id) for s in selected])
    return selected


def factory() -> ReferenceAdapter:
    patch(phase2, "_load", load)
    return ReferenceAdapter()

"""Phase 2 selects outputs of disabled and polluted threads too."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import selection
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m52-selection-any-memory-mode", __doc__ or "",
                ("p2.sel.select[disabled-thread-takes-no-slot]",
                 "p2.sel.select[polluted-thread-takes-no-slot]"))


def _thread(state: sqlite3.Connection, thread_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = state.execute(
        "SELECT cwd, rollout_path, git_branch FROM threads WHERE id = ?", (thread_id,)).fetchone()
    return row


def factory() -> ReferenceAdapter:
    patch(selection, "_thread", _thread)
    return ReferenceAdapter()

"""Selection marks are set by thread id alone, so a refreshed row is marked too."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m49-marks-ignore-snapshot", __doc__ or "", ("p2.job.success",))
_original = jobs.global_succeeded


def _by_thread(con: sqlite3.Connection, token: str, completed_watermark: int,
               selected: list[tuple[str, int]], now: int) -> bool:
    current = [(t, row[0]) for t, _ in selected
               if (row := con.execute("SELECT source_updated_at FROM stage1_outputs WHERE "
                                      "thread_id = ?", (t,)).fetchone()) is not None]
    return _original(con, token, completed_watermark, current, now)


def factory() -> ReferenceAdapter:
    patch(jobs, "global_succeeded", _by_thread)
    return ReferenceAdapter()

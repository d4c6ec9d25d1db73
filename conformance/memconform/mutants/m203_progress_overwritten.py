"""consolidation_progress takes the last successful run's count, even when it is lower."""

import sqlite3
from typing import Any

from memconform.mutants import Mutant, patch
from memref import jobs, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m203-progress-overwritten", __doc__ or "",
                ("p2.progress.max-threads[higher-before]",))
_original = jobs.global_succeeded


def global_succeeded(con: sqlite3.Connection, token: str, completed_watermark: int,
                     selected: list[tuple[str, int]], now: int) -> Any:
    done = _original(con, token, completed_watermark, selected, now)
    if done:
        con.execute("UPDATE consolidation_progress SET max_thread_count = ?", (len(selected),))
    return done


def factory() -> ReferenceAdapter:
    patch(jobs, "global_succeeded", global_succeeded)
    return ReferenceAdapter(releases.get("0.171.0"))

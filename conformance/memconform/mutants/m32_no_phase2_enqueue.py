"""Storing or deleting an output never enqueues the consolidation job."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import jobs
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m32-no-phase2-enqueue", __doc__ or "",
                ("p1.out.enqueues-phase2", "p1.empty.forget[both-empty]"))


def _nothing(con: sqlite3.Connection, watermark: int) -> None:
    return None


def factory() -> ReferenceAdapter:
    patch(jobs, "enqueue_global", _nothing)
    return ReferenceAdapter()

"""Enqueueing for a polluted thread also clears the last success time, skipping the
six-hour cooldown."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import pollution
from memref.adapter import ReferenceAdapter
from memref.jobs import enqueue_global as _enqueue

MUTANT = Mutant("m95-pollution-resets-cooldown", __doc__ or "",
                ("read.poll.cooldown-kept",
                 "read.poll.item[selected-thread-enqueues-consolidation]"))


def enqueue_global(con: sqlite3.Connection, watermark: int) -> None:
    _enqueue(con, watermark)
    con.execute("UPDATE jobs SET finished_at = NULL WHERE kind = 'memory_consolidate_global'")


def factory() -> ReferenceAdapter:
    patch(pollution, "enqueue_global", enqueue_global)
    return ReferenceAdapter()

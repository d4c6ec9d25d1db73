"""Polluting a thread the last consolidation used does not enqueue the consolidation job."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import pollution
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m94-pollution-never-enqueues", __doc__ or "",
                ("read.poll.item[selected-thread-enqueues-consolidation]",
                 "read.poll.item[already-polluted-selected-thread-enqueues-again]"))


def enqueue_global(con: sqlite3.Connection, watermark: int) -> None:
    return None


def factory() -> ReferenceAdapter:
    patch(pollution, "enqueue_global", enqueue_global)
    return ReferenceAdapter()

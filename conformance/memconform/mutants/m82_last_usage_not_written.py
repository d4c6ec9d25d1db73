"""Usage write-back bumps usage_count but leaves last_usage alone."""

import sqlite3

from memconform.mutants import Mutant, patch
from memref import usage
from memref.adapter import ReferenceAdapter
from memref.jobs import immediate

MUTANT = Mutant("m82-last-usage-not-written", __doc__ or "",
                ("read.usage.writeback[one-cited-row]", "read.usage.saves-from-pruning"))


def record_usage(con: sqlite3.Connection, thread_ids: list[str], now: int) -> int:
    del now
    with immediate(con):
        return sum(con.execute("UPDATE stage1_outputs SET usage_count = COALESCE(usage_count,"
                               " 0) + 1 WHERE thread_id = ?", (tid,)).rowcount
                   for tid in thread_ids)


def factory() -> ReferenceAdapter:
    patch(usage, "record_usage", record_usage)
    return ReferenceAdapter()

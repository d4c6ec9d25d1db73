"""A failed quota lookup lets the task through (fails open)."""

import sys
from typing import Any

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract

MUTANT = Mutant("c09-quota-fails-open", __doc__ or "",
                ("cloud.gate[quota-lookup-failure-fails-closed]",), profile="cloud")
_remaining = extract.remaining_percent


def apply() -> None:
    def remaining_percent(con: Any, user_id: str, now: int,
                          faults: extract.Faults) -> float | None:
        try:
            return _remaining(con, user_id, now, faults)
        except extract.QuotaLookupError:
            return None

    patch(extract, "remaining_percent", remaining_percent)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

"""A forced run also lifts the quota gate."""

import sys
from typing import Any

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract

MUTANT = Mutant("c01-force-skips-quota", __doc__ or "",
                ("cloud.gate[force-keeps-the-quota-gate]",
                 "cloud.gate[force-keeps-a-failed-quota-lookup]"), profile="cloud")
_gate = extract.gate


def apply() -> None:
    def gate(con: Any, task: dict[str, Any], prefs: dict[str, Any], now: int, force: bool,
             faults: extract.Faults) -> str | None:
        reason = _gate(con, task, prefs, now, force, faults)
        return None if force and reason in ("quota_exhausted", "quota_check_failed") else reason

    patch(extract, "gate", gate)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

"""Failed and interrupted tasks are extracted like completed ones."""

import sys
from typing import Any

from sqlalchemy import update

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract
from memref.cloud.schema import tasks

MUTANT = Mutant("c12-failed-tasks-extracted", __doc__ or "",
                ("cloud.gate[failed-task-never-considered]",
                 "cloud.gate[interrupted-task-never-considered]"), profile="cloud")
_sweep = extract.sweep


def apply() -> None:
    def sweep(con: Any, now: int, faults: extract.Faults, **kwargs: Any) -> extract.SweepResult:
        con.execute(update(tasks).where(tasks.c.status.in_(("failed", "interrupted")))
                    .values(status="completed"))
        return _sweep(con, now, faults, **kwargs)

    patch(extract, "sweep", sweep)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

"""The injected memories are written into the stored task's prompt and goal."""

import sys
from typing import Any

from sqlalchemy import update

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import inject
from memref.cloud.schema import tasks

MUTANT = Mutant("c06-stored-prompt-rewritten", __doc__ or "",
                ("cloud.inject.stored-unchanged",), profile="cloud")
_turn_input = inject.turn_input


def apply() -> None:
    def turn_input(con: Any, task: dict[str, Any], turn: str, now: int,
                   faults: Any) -> dict[str, Any]:
        result = _turn_input(con, task, turn, now, faults)
        con.execute(update(tasks).where(tasks.c.id == task["id"]).values(
            prompt=result["prompt"], goal=result["goal"]))
        return result

    patch(inject, "turn_input", turn_input)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

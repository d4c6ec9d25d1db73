"""Continuations and resumes get memories as if they were first turns."""

import sys

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import inject

MUTANT = Mutant("c05-injects-every-turn", __doc__ or "",
                ("cloud.inject.not-other-turns[continuation]",
                 "cloud.inject.not-other-turns[resume]"), profile="cloud")
_turn_input = inject.turn_input


def apply() -> None:
    patch(inject, "turn_input", lambda con, task, turn, now, faults: _turn_input(
        con, task, "first", now, faults))



if __name__ == "__main__":
    sys.exit(serve_patched(apply))

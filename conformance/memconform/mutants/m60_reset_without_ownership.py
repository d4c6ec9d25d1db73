"""The worker never re-checks that it still owns the job before editing and resetting."""

from memconform.mutants import Mutant, patch
from memref import phase2
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m60-reset-without-ownership", __doc__ or "",
                ("p2.race.lost-ownership", "p2.race.lost-ownership-writes"))


def factory() -> ReferenceAdapter:
    patch(phase2, "still_owned", lambda con, token, rt: True)
    return ReferenceAdapter()

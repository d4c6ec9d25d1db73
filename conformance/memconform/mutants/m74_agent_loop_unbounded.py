"""The consolidation agent's tool loop has no practical bound."""

from memconform.mutants import Mutant, patch
from memref import agent
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m74-agent-loop-unbounded", __doc__ or "", ("p2.run.agent-turn-bound",))


def factory() -> ReferenceAdapter:
    patch(agent, "MAX_TURNS", 10_000)
    return ReferenceAdapter()

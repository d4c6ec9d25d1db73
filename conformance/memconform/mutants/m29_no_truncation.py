"""Long rollouts are sent whole, never cut to the token budget."""

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m29-no-truncation", __doc__ or "", ("p1.in.truncate",))


def factory() -> ReferenceAdapter:
    patch(rollout_input, "truncate_middle", lambda text, max_tokens: text)
    return ReferenceAdapter()

"""AGENTS.md and skill fragments in user messages are sent to the extraction model."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m31-agents-fragments-kept", __doc__ or "",
                ("p1.in.dropped[DROP-AGENTS-1]", "p1.in.dropped[DROP-SKILL-1]"))


def _never(part: dict[str, Any]) -> bool:
    return False


def factory() -> ReferenceAdapter:
    patch(rollout_input, "_excluded_fragment", _never)
    return ReferenceAdapter()

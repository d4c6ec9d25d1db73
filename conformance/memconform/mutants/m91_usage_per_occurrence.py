"""A message's usage write counts every listed occurrence of an id, so an id cited twice
gets two uses."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m91-usage-per-occurrence", __doc__ or "",
                ("read.usage.writeback[duplicate-id-counts-once]",))
_parse = citations.parse_citation


def parse_citation(bodies: list[str]) -> Any:
    parsed = _parse(bodies)
    if parsed is not None:
        listed = [line.strip(citations.WHITESPACE) for body in bodies
                  for line in citations.rust_lines(citations._block(body, "rollout_ids") or "")]
        parsed.rollout_ids = [raw for raw in listed if raw]
    return parsed


def factory() -> ReferenceAdapter:
    patch(citations, "parse_citation", parse_citation)
    return ReferenceAdapter()

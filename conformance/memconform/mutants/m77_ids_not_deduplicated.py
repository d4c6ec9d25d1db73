"""Cited ids are kept as often as they appear."""

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m77-ids-not-deduplicated", __doc__ or "",
                ("read.cite.blocks[ids-deduplicated-in-order]",
                 "read.cite.blocks[ids-deduplicated-across-blocks]"))


def parse_citation(bodies: list[str]) -> citations.Citation | None:
    found = citations.Citation()
    for body in bodies:
        for tag in ("citation_entries", "rollout_ids"):
            block = citations._block(body, tag)
            for line in citations.rust_lines(block) if block is not None else []:
                if tag == "citation_entries":
                    entry = citations.parse_entry(line)
                    if entry is not None:
                        found.entries.append(entry)
                elif line.strip():
                    found.rollout_ids.append(line.strip())
    return found if found.entries or found.rollout_ids else None


def factory() -> ReferenceAdapter:
    patch(citations, "parse_citation", parse_citation)
    return ReferenceAdapter()

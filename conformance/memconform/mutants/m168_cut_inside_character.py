"""The stage-1 input is cut at the exact byte of each half of the budget, even inside a
character; the broken pieces become U+FFFD."""

from memconform.mutants import Mutant, patch
from memref import rollout_input, truncate
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m168-cut-inside-character", __doc__ or "",
                ("p1.in.truncate-exact[three-byte-characters]",
                 "p1.in.truncate-exact[three-byte-characters-double-floor]",
                 "p1.in.truncate-exact[four-byte-characters]"))


def truncate_middle(text: str, max_tokens: int) -> str:
    data = text.encode("utf-8")
    budget = max_tokens * 4
    if len(data) <= budget:
        return text
    removed = -(-(len(data) - budget) // 4)
    half = budget // 2
    return (data[:half].decode("utf-8", errors="replace") + truncate.marker(removed)
            + data[len(data) - half:].decode("utf-8", errors="replace"))


def factory() -> ReferenceAdapter:
    patch(rollout_input, "truncate_middle", truncate_middle)
    return ReferenceAdapter()

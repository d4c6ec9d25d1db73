"""A long memory summary is cut to its head only."""

from memconform.mutants import Mutant, patch
from memref import injection
from memref.adapter import ReferenceAdapter
from memref.truncate import marker

MUTANT = Mutant("m84-truncation-keeps-head", __doc__ or "",
                ("read.inj.summary[head-and-tail-kept]",))


def head_only(text: str, max_tokens: int) -> str:
    data = text.encode("utf-8")
    budget = max_tokens * 4
    if len(data) <= budget:
        return text
    return data[:budget].decode("utf-8", "ignore") + marker(-(-(len(data) - budget) // 4))


def factory() -> ReferenceAdapter:
    patch(injection, "truncate_middle", head_only)
    return ReferenceAdapter()

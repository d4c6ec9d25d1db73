"""read decides whether to cut by the token estimate rounded down (bytes // 4), so a slice up to
3 bytes over the 80,000-byte budget is returned whole."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import reading
from memref.truncate import truncate_middle

MUTANT = Mutant("m149-read-cap-by-floored-tokens", __doc__ or "",
                ("read.tool.read[token-cap-at-the-byte-budget]",))


def truncate(text: str, max_tokens: int) -> str:
    if len(text.encode("utf-8")) // 4 <= max_tokens:
        return text
    return truncate_middle(text, max_tokens)


def factory() -> ReferenceAdapter:
    patch(reading, "truncate_middle", truncate)
    return ReferenceAdapter()

"""The memory summary is measured and cut as CESU-8 (UTF-8 of UTF-16 code units): a character
outside the BMP counts as 6 bytes, two 3-byte surrogates."""

from memconform.mutants import Mutant, patch
from memref import injection
from memref.adapter import ReferenceAdapter
from memref.truncate import marker

MUTANT = Mutant("m145-summary-bytes-as-utf16-surrogates", __doc__ or "",
                ("read.inj.summary[four-byte-characters]",))


def width(char: str) -> int:
    return 6 if ord(char) > 0xFFFF else len(char.encode("utf-8"))


def within(widths: list[int], budget: int) -> int:
    """How many leading characters fit in `budget` bytes."""
    used = count = 0
    for w in widths:
        if used + w > budget:
            break
        used += w
        count += 1
    return count


def truncate(text: str, max_tokens: int) -> str:
    widths = [width(c) for c in text]
    total, budget = sum(widths), max_tokens * 4
    if total <= budget:
        return text
    head = within(widths, budget // 2)
    tail = within(widths[::-1], budget - budget // 2)
    return text[:head] + marker(-(-(total - budget) // 4)) + text[len(text) - tail:]


def factory() -> ReferenceAdapter:
    patch(injection, "truncate_middle", truncate)
    return ReferenceAdapter()

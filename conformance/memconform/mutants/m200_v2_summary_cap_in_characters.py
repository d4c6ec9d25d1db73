"""Layout v2 caps a stored summary at 9,000 characters, not 9,000 bytes."""

from memconform.mutants import Mutant, patch
from memref import releases, stage1_output
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m200-v2-summary-cap-in-characters", __doc__ or "",
                ("p1.v2.summary-cap[multibyte-long]",))


def by_characters(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[:limit // 2], text[len(text) - (limit - limit // 2):]
    return f"{head}\u2026{len(text) - limit} chars truncated\u2026{tail}"


def factory() -> ReferenceAdapter:
    patch(stage1_output, "truncate_middle_bytes", by_characters)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

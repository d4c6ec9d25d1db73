"""Layout v2 stage-1 input: a user message is cut before the last non-ASCII character within
8,900 bytes, not at the last character boundary (a run of two-byte characters across the cut
moves the cut back to the run's start)."""

from memconform.mutants import Mutant, patch
from memref import phase1, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m216-v2-pieces-cut-before-multibyte", __doc__ or "", ("p1.v2.piece-cuts",))


def split_bytes(text: str, max_bytes: int) -> list[str]:
    data = text.encode("utf-8")
    pieces, start = [], 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        while start < end < len(data) and data[end - 1] >= 0x80:
            end -= 1
        end = end if end > start else min(start + max_bytes, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end -= 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces


def factory() -> ReferenceAdapter:
    patch(phase1, "split_bytes", split_bytes)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

"""Head-and-tail truncation by Codex's token estimate (TRUNC-01..TRUNC-05) or by bytes, and
splitting a text into pieces of bounded size."""

from __future__ import annotations

from memref.tokens import BYTES_PER_TOKEN


def marker(tokens: int) -> str:
    return f"\u2026{tokens} tokens truncated\u2026"


def truncate_middle(text: str, max_tokens: int) -> str:
    """Keep the first and last halves of a `4 * max_tokens` byte budget (max_tokens >= 1), whole
    characters only, with `…N tokens truncated…` between them (N from total bytes minus
    budget)."""
    data = text.encode("utf-8")
    if not data:
        return ""
    budget = max_tokens * BYTES_PER_TOKEN
    if len(data) <= budget:
        return text
    removed = -(-(len(data) - budget) // BYTES_PER_TOKEN)
    left, right = budget // 2, budget - budget // 2
    # a cut inside a character drops that character: the only undecodable bytes of a slice
    # of valid UTF-8 are the pieces of a character cut at its ends
    head = data[:left].decode("utf-8", errors="ignore")
    tail = data[len(data) - right:].decode("utf-8", errors="ignore")
    return head + marker(removed) + tail


def chars_marker(chars: int) -> str:
    return f"\u2026{chars} chars truncated\u2026"


def truncate_middle_bytes(text: str, max_bytes: int) -> str:
    """Keep the first and last halves of a `max_bytes` budget, whole characters only, with
    `…N chars truncated…` between them (N: the characters removed; the marker is not counted
    in the budget). Text that fits is returned as it is (P1-V2-03, P1-V2-04)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    left, right = max_bytes // 2, max_bytes - max_bytes // 2
    head = data[:left].decode("utf-8", errors="ignore")
    tail = data[len(data) - right:].decode("utf-8", errors="ignore")
    return head + chars_marker(len(text) - len(head) - len(tail)) + tail


def split_bytes(text: str, max_bytes: int) -> list[str]:
    """Consecutive pieces of at most `max_bytes` UTF-8 bytes each, cut between characters
    (not at line ends); joined they give `text` back (P1-V2-04, READ-V2-01)."""
    data = text.encode("utf-8")
    pieces, start = [], 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # inside a character
            end -= 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces

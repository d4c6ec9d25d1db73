"""Head-and-tail truncation by Codex's token estimate (TRUNC-01..TRUNC-05)."""

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

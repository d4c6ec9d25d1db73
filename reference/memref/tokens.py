"""Token counting: Codex's byte rule (TOK-01).

Every token bound of the pipeline (the stage-1 budget, the injected summary, the read cap) is
counted this way; no rule needs a real tokenizer.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 4


def approx_token_count(text: str) -> int:
    """Codex's estimate: UTF-8 length divided by four, rounded up."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)

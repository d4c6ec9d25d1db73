"""The byte-rule token estimate rounds down instead of up."""

from memconform.mutants import Mutant, patch
from memref import tokens
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m04-tokens-round-down", __doc__ or "",
                ("tokens.approx[five-bytes]", "tokens.approx[one-byte]"))


def _floor(text: str) -> int:
    return len(text.encode("utf-8")) // tokens.BYTES_PER_TOKEN


def factory() -> ReferenceAdapter:
    patch(tokens, "approx_token_count", _floor)
    return ReferenceAdapter()

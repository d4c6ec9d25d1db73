"""Extraction asks for medium reasoning effort instead of low."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase1
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m43-reasoning-effort-medium", __doc__ or "", ("p1.in.request.shape",))
_original = phase1.request_body


def _medium(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return {**_original(*args, **kwargs), "reasoning": {"effort": "medium"}}


def factory() -> ReferenceAdapter:
    patch(phase1, "request_body", _medium)
    return ReferenceAdapter()

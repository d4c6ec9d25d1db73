"""The extraction request's JSON schema is not strict and allows extra fields."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase1
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m42-schema-not-strict", __doc__ or "",
                ("p1.in.request.shape", "p1.snap.extraction"))
_original = phase1.request_body


def _loose(*args: Any, **kwargs: Any) -> dict[str, Any]:
    body = _original(*args, **kwargs)
    fmt = body["text"]["format"]
    fmt["strict"] = False
    fmt["schema"] = {**fmt["schema"], "additionalProperties": True}
    return body


def factory() -> ReferenceAdapter:
    patch(phase1, "request_body", _loose)
    return ReferenceAdapter()

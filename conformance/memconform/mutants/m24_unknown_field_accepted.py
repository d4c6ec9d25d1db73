"""Unknown fields in the model's answer are ignored instead of failing the job."""

import json

from memconform.mutants import Mutant, patch
from memref import phase1, stage1_output
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m24-unknown-field-accepted", __doc__ or "", ("p1.out.invalid[extra-field]",))
_original = stage1_output.parse


def _lenient(text: str) -> stage1_output.StageOneOutput:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return _original(text)
    if isinstance(value, dict):
        text = json.dumps({k: v for k, v in value.items() if k in stage1_output.FIELDS})
    return _original(text)


def factory() -> ReferenceAdapter:
    patch(phase1, "parse", _lenient)
    return ReferenceAdapter()

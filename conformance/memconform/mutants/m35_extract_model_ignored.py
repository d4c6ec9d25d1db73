"""The configured extract_model is ignored; the default model is always used."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig

MUTANT = Mutant("m35-extract-model-ignored", __doc__ or "",
                ("p1.in.request.model[configured]",))


def factory() -> ReferenceAdapter:
    patch(CodexConfig, "extract_model", property(lambda self: self.release.extract_model))
    return ReferenceAdapter()

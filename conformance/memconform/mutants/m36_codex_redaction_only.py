"""Only the secret shapes the Codex binary knows are redacted."""

from memconform.mutants import Mutant, patch
from memref import redact
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m36-codex-redaction-only", __doc__ or "",
                ("p1.red.request.extended", "p1.red.stored.extended",
                 "p1.red.leak-scan.extended"))


def factory() -> ReferenceAdapter:
    patch(redact, "EXTENDED_RULES", ())
    return ReferenceAdapter()

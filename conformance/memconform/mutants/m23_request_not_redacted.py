"""The rollout is sent to the model before redaction (only the stored fields are redacted)."""

from memconform.mutants import Mutant, patch
from memref import rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m23-request-not-redacted", __doc__ or "",
                ("p1.red.request.codex", "p1.red.generated"))


def factory() -> ReferenceAdapter:
    patch(rollout_input, "redact", lambda text: text)
    return ReferenceAdapter()

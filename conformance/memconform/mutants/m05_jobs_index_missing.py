"""The memories DB is created without the jobs (kind, status, retry_at, lease_until) index."""

from memconform.mutants import Mutant
from memref import store
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m05-jobs-index-missing", __doc__ or "", ("store.schema[jobs]",))
_original = store.codex_schema_statements


def _statements(db: str) -> list[str]:
    return [s for s in _original(db) if "idx_jobs_kind_status_retry_lease" not in s]


def factory() -> ReferenceAdapter:
    store.codex_schema_statements = _statements
    return ReferenceAdapter()

"""The memories DB is created without the jobs (kind, status, retry_at, lease_until) index."""

from memconform.mutants import Mutant, patch
from memconform.resources import codex_schema_statements
from memref import store
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m05-jobs-index-missing", __doc__ or "", ("store.schema[jobs]",))


def _statements(db: str) -> list[str]:
    return [s for s in codex_schema_statements(db) if "idx_jobs_kind_status_retry_lease" not in s]


def factory() -> ReferenceAdapter:
    patch(store, "codex_schema_statements", _statements)
    return ReferenceAdapter()

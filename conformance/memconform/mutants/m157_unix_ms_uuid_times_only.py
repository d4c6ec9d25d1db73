"""The summary stem knows only the Unix-millisecond UUID layout: v1 and v6 ids (Gregorian
100 ns times) fall back to the source time, and a v8 id's top 48 bits are read as a v7 time."""

import uuid

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m157-unix-ms-uuid-times-only", __doc__ or "",
                ("p2.fs.stem[v1-id-uses-its-timestamp]", "p2.fs.stem[v6-id-uses-its-timestamp]",
                 "p2.fs.stem[v8-id-uses-source-time]"))


def uuid_time_s(value: uuid.UUID) -> float | None:
    return (value.int >> 80) / 1000 if value.version in (7, 8) else None


def factory() -> ReferenceAdapter:
    patch(materialize, "_uuid_time_s", uuid_time_s)
    return ReferenceAdapter()

"""Thread ids are validated like npm uuid's validate(): after the spelling is read, only versions
1 to 8 with the RFC variant (and the nil and max UUIDs) count; other versions and variants are
dropped."""

import re

from memconform.mutants import Mutant, patch
from memref import citations
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m140-rfc-uuid-versions-only", __doc__ or "",
                ("read.cite.blocks[any-version-any-case-exact-length]",
                 "read.cite.turn[any-version-any-case-exact-length]"))
RFC = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
                 r"|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff")
_thread_id = citations.thread_id


def thread_id(raw: str) -> str | None:
    canonical = _thread_id(raw)
    return canonical if canonical is not None and RFC.fullmatch(canonical) else None


def factory() -> ReferenceAdapter:
    patch(citations, "thread_id", thread_id)
    return ReferenceAdapter()

"""Raw memories are copied into raw_memories.md without trimming surrounding whitespace."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m58-raw-memory-untrimmed", __doc__ or "", ("p2.fs.raw-memories",))


def factory() -> ReferenceAdapter:
    patch(materialize, "WHITESPACE", "")
    return ReferenceAdapter()

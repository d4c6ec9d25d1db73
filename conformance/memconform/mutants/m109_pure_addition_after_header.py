"""apply_patch puts a chunk of only added lines right under its `@@` header line instead of at
the end of the file."""

from memconform.mutants import Mutant, patch
from memref import patch as patching
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m109-pure-addition-after-header", __doc__ or "",
                ("p2.patch.case[pure-addition-with-header-goes-to-end]",
                 "p2.patch.case[pure-addition-after-edit]"))
_updated = patching._updated


def updated(rel: str, content: str, chunks: list[patching._Chunk]) -> str:
    # a headed pure addition becomes "the header line, then the added lines", sought from the
    # cursor: the lines land under the header
    placed = [patching._Chunk(None, [c.header], [c.header, *c.new], c.eof)
              if c.header is not None and not c.old else c for c in chunks]
    return _updated(rel, content, placed)


def factory() -> ReferenceAdapter:
    patch(patching, "_updated", updated)
    return ReferenceAdapter()

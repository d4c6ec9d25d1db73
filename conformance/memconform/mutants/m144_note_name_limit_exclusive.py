"""A note's file name of exactly 128 bytes is refused as too long (the limit is exclusive)."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import notes
from memref.tools.errors import ToolError

MUTANT = Mutant("m144-note-name-limit-exclusive", __doc__ or "",
                ("read.tool.note[name-of-exactly-128-bytes-reaches-the-slug-check]",))
_check_filename = notes.check_filename


def check_filename(filename: str) -> None:
    if len(filename.encode("utf-8")) >= notes.MAX_NAME_BYTES:
        raise ToolError(f"filename '{filename}' must be at most {notes.MAX_NAME_BYTES} bytes")
    _check_filename(filename)


def factory() -> ReferenceAdapter:
    patch(notes, "check_filename", check_filename)
    return ReferenceAdapter()

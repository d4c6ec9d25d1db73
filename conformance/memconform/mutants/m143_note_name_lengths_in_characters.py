"""A note's file name and slug lengths are counted in characters, not UTF-8 bytes."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import notes
from memref.tools.errors import ToolError

MUTANT = Mutant("m143-note-name-lengths-in-characters", __doc__ or "",
                ("read.tool.note[slug-of-82-bytes-in-41-characters-refused]",
                 "read.tool.note[name-of-129-bytes-in-76-characters-refused]"))
LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def check_filename(filename: str) -> None:
    def refuse(reason: str) -> ToolError:
        return ToolError(f"filename '{filename}' {reason}")

    if len(filename) > notes.MAX_NAME_BYTES:
        raise refuse(f"must be at most {notes.MAX_NAME_BYTES} bytes")
    if not filename.endswith(".md"):
        raise refuse("must end with .md")
    stem = filename[:-3]
    if (len(stem) <= notes.STAMP_BYTES or not all("0" <= stem[i] <= "9" for i in notes.DIGITS)
            or any(stem[i] != c for i, c in notes.SEPARATORS.items())):
        raise refuse(notes.FORMAT)
    slug = stem[notes.STAMP_BYTES:]
    if not 1 <= len(slug) <= 80:
        raise refuse("slug must be 1 to 80 bytes")
    if not set(slug) <= LOWER:
        raise refuse("slug must contain only lowercase ASCII letters, digits, or hyphens")


def factory() -> ReferenceAdapter:
    patch(notes, "check_filename", check_filename)
    return ReferenceAdapter()

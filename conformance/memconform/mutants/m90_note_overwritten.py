"""An ad-hoc note with an existing name replaces the old note."""

from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import calls, notes

MUTANT = Mutant("m90-note-overwritten", __doc__ or "",
                ("read.tool.note[never-overwritten]", "read.tool.note[existing-file-kept]"))


def add_note(root: Path, filename: str, note: str) -> dict[str, Any]:
    notes.check_filename(filename)
    folder = root.joinpath(*notes.NOTES_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text(note, encoding="utf-8")
    return {}


def factory() -> ReferenceAdapter:
    patch(calls, "RUNNERS", {**calls.RUNNERS, "add_ad_hoc_note": add_note})
    return ReferenceAdapter()

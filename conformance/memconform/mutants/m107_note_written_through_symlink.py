"""A note is written through an existing symlink of the same name (plain create, no
exclusive open)."""

import os
from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import calls, notes
from memref.tools.errors import ToolError

MUTANT = Mutant("m107-note-written-through-symlink", __doc__ or "",
                ("read.tool.path[outside-file-never-created-through-note-symlink]",
                 "read.tool.fuzz.add_ad_hoc_note"))


def add_note(root: Path, filename: str, note: str) -> dict[str, Any]:
    notes.check_filename(filename)
    folder = root.joinpath(*notes.NOTES_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / filename
    if target.exists():  # follows the link: a dangling one looks free
        raise ToolError(f"ad-hoc note '{filename}' already exists")
    with open(os.path.realpath(target), "w", encoding="utf-8") as handle:
        handle.write(note)
    return {}


def factory() -> ReferenceAdapter:
    patch(calls, "RUNNERS", {**calls.RUNNERS, "add_ad_hoc_note": add_note})
    return ReferenceAdapter()

"""list shows hidden entries of a folder."""

import os
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import listing
from memref.tools.paths import display

MUTANT = Mutant("m96-list-shows-hidden", __doc__ or "",
                ("read.tool.list[root-is-shallow]", "read.tool.fuzz.list"))


def children(root: Path, folder: Path) -> list[dict[str, str]]:
    found = []
    for name in sorted(os.listdir(folder), key=os.fsencode):
        kind = listing.entry_type(os.lstat(folder / name).st_mode)
        if kind is not None:
            found.append({"path": display(root, folder / name), "entry_type": kind})
    return found


def factory() -> ReferenceAdapter:
    patch(listing, "children", children)
    return ReferenceAdapter()

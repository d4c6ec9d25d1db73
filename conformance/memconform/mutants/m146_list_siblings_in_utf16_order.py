"""list orders siblings by the UTF-16 code units of their names (as Java and JavaScript compare
strings), which puts characters outside the BMP before U+E000..U+FFFF."""

import os
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import listing
from memref.tools.paths import display

MUTANT = Mutant("m146-list-siblings-in-utf16-order", __doc__ or "",
                ("read.tool.list[non-ascii-siblings-in-utf8-byte-order]",))


def children(root: Path, folder: Path) -> list[dict[str, str]]:
    found = []
    for name in sorted(os.listdir(folder), key=lambda n: n.encode("utf-16-be", "surrogatepass")):
        if name.startswith("."):
            continue
        kind = listing.entry_type(os.lstat(folder / name).st_mode)
        if kind is not None:
            found.append({"path": display(root, folder / name), "entry_type": kind})
    return found


def factory() -> ReferenceAdapter:
    patch(listing, "children", children)
    return ReferenceAdapter()

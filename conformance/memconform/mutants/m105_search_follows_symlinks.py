"""search reads symlinked files found in a folder it walks (their targets may lie outside the
memory root)."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import search

MUTANT = Mutant("m105-search-follows-symlinks", __doc__ or "",
                ("read.tool.search[symlinked-file-skipped-in-a-walk]",
                 "read.tool.fuzz.search"))


def files_under(target: Path, info: os.stat_result) -> Iterator[Path]:
    if stat.S_ISREG(info.st_mode):
        yield target
        return
    for name in os.listdir(target):
        child = target / name
        mode = os.lstat(child).st_mode
        if name.startswith("."):
            continue
        if stat.S_ISDIR(mode):
            yield from files_under(child, os.lstat(child))
        elif child.is_file():  # follows a link to a file
            yield child


def factory() -> ReferenceAdapter:
    patch(search, "files_under", files_under)
    return ReferenceAdapter()

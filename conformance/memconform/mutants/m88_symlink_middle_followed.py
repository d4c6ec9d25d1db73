"""Tool paths check only their last component for a symlink; links in the middle are
followed out of the memory root."""

import os
import stat
from pathlib import Path

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import paths
from memref.tools.errors import invalid_path

MUTANT = Mutant("m88-symlink-middle-followed", __doc__ or "",
                ("read.tool.path[symlinked-directory-in-the-middle-refused]",
                 "read.tool.fuzz.read"))


def resolve(root: Path, path: str | None) -> Path:
    if path is None:
        return root
    target = root.joinpath(*paths.components(path))
    if os.path.lexists(target) and stat.S_ISLNK(os.lstat(target).st_mode):
        raise invalid_path(path, "must not be a symlink")
    return target


def factory() -> ReferenceAdapter:
    for module in ("listing", "reading", "search"):
        patch(__import__(f"memref.tools.{module}", fromlist=["x"]), "resolve", resolve)
    return ReferenceAdapter()

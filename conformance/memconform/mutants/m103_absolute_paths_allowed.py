"""An absolute tool path is read as if relative to the memory root's file system root: the
leading slash is accepted and the path leaves the memory root."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import paths

MUTANT = Mutant("m103-absolute-paths-allowed", __doc__ or "",
                ("read.tool.path[absolute-refused]", "read.tool.fuzz.read"))
_resolve = paths.resolve


def resolve(root: Path, path: str | None) -> Path:
    if path is not None and path.startswith("/"):
        return Path(path)
    return _resolve(root, path)


def factory() -> ReferenceAdapter:
    for module in ("listing", "reading", "search"):
        patch(__import__(f"memref.tools.{module}", fromlist=["x"]), "resolve", resolve)
    return ReferenceAdapter()

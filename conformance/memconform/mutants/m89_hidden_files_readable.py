"""Hidden path components are treated like any other name, so `.git/config` is readable."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import paths
from memref.tools.errors import invalid_path

MUTANT = Mutant("m89-hidden-files-readable", __doc__ or "",
                ("read.tool.path[hidden-file-not-found]", "read.tool.fuzz.read"))


def components(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if path.startswith("/") or paths.DRIVE.match(path) or ".." in parts:
        raise invalid_path(path, paths.OUTSIDE)
    return parts


def factory() -> ReferenceAdapter:
    patch(paths, "components", components)
    return ReferenceAdapter()

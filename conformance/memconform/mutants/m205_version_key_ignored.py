"""memories.version is ignored: the layout is always the adapter's (or the release's
default)."""

from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref import config, layout, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m205-version-key-ignored", __doc__ or "",
                ("startup.layout.runs[version-v1]", "startup.layout.runs[dual-write-from-v1]",
                 "config.layout.version[v1]"))
_original = layout.select


def select(release: releases.Release, version: str | None, dual_write: bool,
           home: Path | None) -> Any:
    return _original(release, "v2", dual_write, home)


def factory() -> ReferenceAdapter:
    patch(config, "select_layouts", select)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

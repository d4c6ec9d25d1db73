"""The two memory layouts (LAYOUT-01..LAYOUT-03): where a home keeps its memories, and which
one a release runs given `[memories] version`, `dual_write` and the folders already there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memref.releases import Release


@dataclass(frozen=True)
class Layout:
    name: str
    folder: str  # the memory root under CODEX_HOME
    db_file: str  # the memories DB under CODEX_HOME (same schema in both layouts)

    def root(self, home: Path) -> Path:
        return home / self.folder

    def db(self, home: Path) -> Path:
        return home / self.db_file


V1 = Layout("v1", "memories", "memories_1.sqlite")
V2 = Layout("v2", "memories_v2", "memories_v2_1.sqlite")
BY_NAME = {layout.name: layout for layout in (V1, V2)}


def select(release: Release, version: str | None, dual_write: bool,
           home: Path | None) -> tuple[Layout, tuple[Layout, ...]]:
    """(the layout the read path uses, the layouts a startup writes, in order).

    LAYOUT-01: an explicit `version` wins; without one the release's default applies, except
    that a release keeping existing v1 homes stays on v1 when `memories/` exists. LAYOUT-02:
    `dual_write` also runs the other layout (in releases that write both only from v1, only
    when v1 is selected)."""
    if len(release.layouts) < 2:
        return V1, (V1,)
    if version is not None:
        chosen = BY_NAME[version]
    elif release.v1_folder_keeps_v1 and home is not None and V1.root(home).exists():
        chosen = V1
    else:
        chosen = BY_NAME[release.default_layout]
    if dual_write and (release.dual_write_any_layout or chosen is V1):
        return chosen, (V1, V2)
    return chosen, (chosen,)

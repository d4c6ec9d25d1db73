"""Memory roots built from the language-neutral tree specs of `fixtures/read/tools.json`:
files, raw bytes, empty folders, named pipes, symlinks, and an `outside` folder beside the root
that no tool may reach."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def text_of(value: str | dict[str, Any]) -> str:
    """A text given literally or as `{"parts": [[text, repeat], ...]}`."""
    if isinstance(value, str):
        return value
    return "".join(part * count for part, count in value["parts"])


class Tree:
    """A memory root (`<home>/memories`, or `memories_v2` in layout v2) and its outside
    folder beside it (`<home>/outside`)."""

    def __init__(self, root: Path) -> None:
        self.root = root.absolute()
        self.outside = (root.parent / "outside").absolute()

    def substitute(self, text: str) -> str:
        return text.replace("{root}", str(self.root)).replace("{outside}", str(self.outside))

    def build(self, spec: dict[str, Any]) -> None:
        self.outside.mkdir(parents=True, exist_ok=True)
        for name, value in spec.get("outside", {}).items():
            self._write(self.outside / name, text_of(value).encode("utf-8"))
        if spec.get("no_root"):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for name in spec.get("dirs", []):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        for name, value in spec.get("files", {}).items():
            self._write(self.root / name, text_of(value).encode("utf-8"))
        for name, hexed in spec.get("bytes", {}).items():
            self._write(self.root / name, bytes.fromhex(hexed))
        for name in spec.get("fifos", []):
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            os.mkfifo(self.root / name)
        for name, target in spec.get("symlinks", {}).items():
            link = self.root / name
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(self.substitute(target), link)

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    @staticmethod
    def files(folder: Path, base: Path) -> dict[str, str]:
        """Every regular file under `folder` (symlinks not followed), by path relative to
        `base`, with its text."""
        found: dict[str, str] = {}
        if not folder.is_dir() or folder.is_symlink():
            return found
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_file() and not path.is_symlink():
                    found[path.relative_to(base).as_posix()] = path.read_text(
                        encoding="utf-8", errors="replace")
            dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        return found

    def extension_files(self) -> dict[str, str]:
        """Regular files under `extensions/`, by path relative to the root."""
        return self.files(self.root / "extensions", self.root)

    def outside_files(self) -> dict[str, str]:
        return self.files(self.outside, self.outside)


def case_tree(case: dict[str, Any], trees: dict[str, Any]) -> dict[str, Any]:
    """A case's tree spec: its `replace_tree`, or the named tree plus its `extra_tree`."""
    if "replace_tree" in case:
        return dict(case["replace_tree"])
    spec = {key: (dict(value) if isinstance(value, dict) else value)
            for key, value in trees[case["tree"]].items()}
    for key, value in case.get("extra_tree", {}).items():
        spec[key] = [*spec.get(key, []), *value] if isinstance(value, list) else \
            {**spec.get(key, {}), **value}
    return spec

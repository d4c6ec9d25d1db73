"""The consolidation agent's read-only tools, `read_file` and `list_files`.

They are the reference's own choice: the rules pin the agent's request, its `apply_patch` tool and
where it may write (AGENT-01, AGENT-02, PATCH-*), and Codex's agent reads with shell commands
instead, so no portable check calls these two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memref.patch import PatchError, confined

READ_LIMIT = 256 * 1024

READ_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "read_file", "description": "Read one file of the memory folder.",
     "strict": False,
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"], "additionalProperties": False}},
    {"type": "function", "name": "list_files",
     "description": "List the files under a folder of the memory folder (default: all).",
     "strict": False,
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "additionalProperties": False}},
]


def _reachable(root: Path, rel: str) -> bool:
    try:
        return confined(root, rel).is_file()
    except PatchError:
        return False


def list_files(root: Path, rel: str) -> str:
    """The files under `rel` (the whole root when empty) that the other tools may open."""
    base = confined(root, rel) if rel not in ("", ".") else root.resolve()
    if not base.is_dir():
        raise PatchError(f"not a folder: {rel}")
    names = sorted(name for name in (p.relative_to(root.resolve()).as_posix()
                                     for p in base.rglob("*")) if _reachable(root, name))
    return "\n".join(names) + "\n" if names else "(no files)\n"


def read_file(root: Path, rel: str) -> str:
    """The file's first READ_LIMIT bytes as text."""
    path = confined(root, rel)
    if not path.is_file():
        raise PatchError(f"no such file: {rel}")
    return path.read_bytes()[:READ_LIMIT].decode("utf-8", "replace")


def read_tool(root: Path, name: str, args: dict[str, Any]) -> str | None:
    """The answer of a read tool, or None when `name` is not one."""
    if name == "read_file":
        return read_file(root, str(args.get("path", "")))
    if name == "list_files":
        return list_files(root, str(args.get("path", "")))
    return None

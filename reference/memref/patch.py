"""The consolidation agent's file-editing tool: the `apply_patch` envelope format of Codex-style
agents (Add / Delete / Update File, Move to, `@@` chunks, End of File), confined to a memory
root. A patch is parsed and checked in full, then written; an invalid patch writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:"
END_OF_FILE = "*** End of File"
# Exact match first, then ignoring trailing whitespace, then leading and trailing whitespace.
MATCHERS: tuple[Callable[[str], str], ...] = (str, str.rstrip, str.strip)


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; the message names the problem (and the path)."""


@dataclass(frozen=True)
class Change:
    action: str  # "add" | "delete" | "update" | "move"
    path: str  # root-relative, '/' separated (the destination for a move)


@dataclass
class _Chunk:
    header: str
    old: list[str] = field(default_factory=list)
    new: list[str | int] = field(default_factory=list)  # int: index of a context line in `old`
    eof: bool = False


@dataclass
class _Op:
    kind: str  # "add" | "delete" | "update"
    path: str
    content: str = ""  # added files only
    move_to: str | None = None
    chunks: list[_Chunk] = field(default_factory=list)


def confined(root: Path, rel: str) -> Path:
    """The absolute path of `rel` inside `root`, or PatchError. Refuses empty and absolute paths,
    any `..` component, any component named `.git` (any case), an existing symlink at any
    component under root (the last one included) and anything resolving outside root.
    Backslashes count as separators."""
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or "\0" in rel:
        raise PatchError(f"refusing an empty or invalid path: {rel!r}")
    if rel.startswith(("/", "\\")) or PureWindowsPath(rel).drive:
        raise PatchError(f"refusing an absolute path: {rel}")
    if ".." in parts:
        raise PatchError(f"refusing to write outside the memory root: {rel}")
    if any(p.lower() == ".git" for p in parts):
        raise PatchError(f"refusing to write inside .git: {rel}")
    base = path = root.resolve()
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise PatchError(f"refusing to follow a symlink: {rel}")
    if not path.resolve().is_relative_to(base):
        raise PatchError(f"refusing to write outside the memory root: {rel}")
    return path


def _header_path(line: str, prefix: str) -> str:
    path = line[len(prefix) :].strip()
    if not path:
        raise PatchError(f"'{prefix}' without a path")
    return path


def _parse(text: str) -> list[_Op]:
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"patch must start with '{BEGIN}'")
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchError(f"patch must end with '{END}'")
    body, i, ops = lines[1:-1], 0, []
    while i < len(body):
        line, i = body[i], i + 1
        if not line.strip():
            continue
        if line.startswith(ADD):
            added = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            ops.append(_Op("add", _header_path(line, ADD), "".join(f"{a}\n" for a in added)))
        elif line.startswith(DELETE):
            ops.append(_Op("delete", _header_path(line, DELETE)))
        elif line.startswith(UPDATE):
            op = _Op("update", _header_path(line, UPDATE))
            if i < len(body) and body[i].startswith(MOVE):
                op.move_to, i = _header_path(body[i], MOVE), i + 1
            while i < len(body) and (body[i].strip() == END_OF_FILE or body[i][:3] != "***"):
                _chunk_line(op, body[i])
                i += 1
            if any(not (c.old or c.new) for c in op.chunks) or not (op.chunks or op.move_to):
                raise PatchError(f"Update File {op.path}: empty change")
            ops.append(op)
        else:
            raise PatchError(f"expected '{ADD}', '{DELETE}' or '{UPDATE}', got {line!r}")
    if not ops:
        raise PatchError("patch contains no file operations")
    return ops


def _chunk_line(op: _Op, line: str) -> None:
    if line.startswith("@@"):
        op.chunks.append(_Chunk(line[2:].strip()))
        return
    if not op.chunks:  # the first chunk may omit its '@@' line
        op.chunks.append(_Chunk(""))
    chunk, tag, rest = op.chunks[-1], line[:1], line[1:]
    if line.strip() == END_OF_FILE:
        chunk.eof = True
    elif tag in (" ", ""):
        chunk.new.append(len(chunk.old))
        chunk.old.append(rest)
    elif tag == "-":
        chunk.old.append(rest)
    elif tag == "+":
        chunk.new.append(rest)
    else:
        raise PatchError(f"Update File {op.path}: unexpected line {line!r}")


def _seek(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    last = len(lines) - len(pattern)
    candidates = [last] if eof and last >= start else range(start, last + 1)  # eof: none or last
    for norm in MATCHERS:
        for at in candidates:
            window = lines[at : at + len(pattern)]
            if all(norm(a) == norm(b) for a, b in zip(window, pattern, strict=True)):
                return at
    return None


def _updated(rel: str, content: str, chunks: list[_Chunk]) -> str:
    """Apply the chunks in order. A chunk's `@@` line, if any, is found first and its lines are
    sought from there on; without old lines the chunk inserts after the `@@` line, else at the
    end. Context lines keep the file's text (which may differ in whitespace)."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    cursor, edits = 0, []
    for chunk in chunks:
        if chunk.header:
            at = _seek(lines, [chunk.header], cursor, False)
            if at is None:
                raise PatchError(f"Update File {rel}: could not find the line {chunk.header!r}")
            cursor = at
        at = cursor + 1 if chunk.header else len(lines)
        if chunk.old:
            found = _seek(lines, chunk.old, cursor, chunk.eof)
            if found is None:
                where = " at the end of the file" if chunk.eof else ""
                raise PatchError(f"Update File {rel}: could not find the lines starting with "
                                 f"{chunk.old[0]!r}{where}")
            at = found
        new = [lines[at + x] if isinstance(x, int) else x for x in chunk.new]
        edits.append((at, len(chunk.old), new))
        cursor = at + len(chunk.old)
    for at, count, new in reversed(edits):
        lines[at : at + count] = new
    return "".join(f"{line}\n" for line in lines)


class _Plan:
    """The new state of the touched files (None = deleted), checked against disk and itself."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.pending: dict[Path, str | None] = {}

    def target(self, rel: str) -> tuple[Path, str]:
        path = confined(self.root, rel)
        return path, path.relative_to(self.root).as_posix()

    def is_file(self, path: Path) -> bool:
        return self.pending[path] is not None if path in self.pending else path.is_file()

    def require_file(self, label: str, path: Path) -> None:
        if not self.is_file(path):
            raise PatchError(f"{label}: not an existing file")

    def read(self, label: str, path: Path) -> str:
        self.require_file(label, path)
        content = self.pending.get(path)
        try:
            return content if content is not None else path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PatchError(f"{label}: cannot read the file ({exc})") from exc

    def write(self, label: str, path: Path, content: str) -> None:
        files = [p for p, c in self.pending.items() if c is not None]
        if path.is_dir() or any(path in p.parents for p in files):
            raise PatchError(f"{label}: a directory is in the way")
        if any(self.is_file(parent) for parent in path.parents if parent.is_relative_to(self.root)):
            raise PatchError(f"{label}: a parent of the path is a file")
        self.pending[path] = content

    def commit(self) -> None:
        for path, content in self.pending.items():
            if content is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8", newline="\n")


def apply_patch(root: Path, text: str) -> list[Change]:
    """Parse the whole patch, check every path and every chunk against the files (and the
    earlier operations of the same patch), then write; nothing is written if any part fails."""
    plan, changes = _Plan(root), []
    for op in _parse(text):
        path, rel = plan.target(op.path)
        label = f"{op.kind.capitalize()} File {op.path}"
        if op.kind == "add":
            plan.write(label, path, op.content)
            changes.append(Change("add", rel))
        elif op.kind == "delete":
            plan.require_file(label, path)
            plan.pending[path] = None
            changes.append(Change("delete", rel))
        else:
            content = _updated(op.path, plan.read(label, path), op.chunks)
            dest, dest_rel = plan.target(op.move_to) if op.move_to else (path, rel)
            if dest != path:
                plan.pending[path] = None
            plan.write(f"Move to {op.move_to}" if op.move_to else label, dest, content)
            changes.append(Change("move" if dest != path else "update", dest_rel))
    plan.commit()
    return changes


def summary(changes: list[Change]) -> str:
    """The tool's output: one line per file, A (added), M (updated or moved) or D (deleted)."""
    letters = {"add": "A", "delete": "D", "update": "M", "move": "M"}
    lines = "".join(f"{letters[c.action]} {c.path}\n" for c in changes)
    return f"Patch applied. Changed files:\n{lines}" if changes else "No files were changed.\n"

"""The consolidation agent's file-editing tool: the `apply_patch` envelope format of Codex-style
agents (Add / Delete / Update File, Move to, `@@` chunks, End of File), confined to a memory
root. The whole patch is parsed and every operation checked against the files on disk, then
the operations are played in order; if any part fails nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
MOVE, END_OF_FILE = "*** Move to: ", "*** End of File"
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
# Typographic punctuation that context matching folds to ASCII as a last resort.
FOLDED = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f"
                    "\u205f\u3000", " "),
})


def folded(line: str) -> str:
    return line.strip().translate(FOLDED)


# Exact first, then ignoring trailing whitespace, then both ends, then with punctuation folded.
MATCHERS: tuple[Callable[[str], str], ...] = (str, str.rstrip, str.strip, folded)


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; the message names the problem (and the path)."""


@dataclass(frozen=True)
class Change:
    action: str  # "add" | "delete" | "update" (a moved file is an update of its new path)
    path: str  # root-relative, '/' separated (the destination for a move)


@dataclass
class _Chunk:
    header: str | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
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


def _lines(text: str) -> list[str]:
    """Split on LF; a CR before the LF belongs to the line break, not the line."""
    return [line.removesuffix("\r") for line in text.strip().split("\n")]


def _enveloped(lines: list[str]) -> bool:
    return len(lines) >= 2 and lines[0].strip() == BEGIN and lines[-1].strip() == END


def _body(text: str) -> list[str]:
    """The lines between the envelope markers (also inside a `<<'EOF'` heredoc wrapper)."""
    lines = _lines(text)
    if not _enveloped(lines) and len(lines) >= 4 and lines[0] in HEREDOC_OPENERS \
            and lines[-1].endswith("EOF") and _enveloped(lines[1:-1]):
        lines = lines[1:-1]
    if lines[0].strip() != BEGIN:
        raise PatchError(f"the first line of the patch must be '{BEGIN}'")
    if not _enveloped(lines):
        raise PatchError(f"the last line of the patch must be '{END}'")
    return lines[1:-1]


def _parse(text: str) -> list[_Op]:
    body, i, ops = _body(text), 0, []
    while i < len(body):
        header, i = body[i].strip(), i + 1
        if header.startswith(ADD):
            added = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            ops.append(_Op("add", header[len(ADD):], "".join(f"{a}\n" for a in added)))
        elif header.startswith(DELETE):
            ops.append(_Op("delete", header[len(DELETE):]))
        elif header.startswith(UPDATE):
            op = _Op("update", header[len(UPDATE):])
            if i < len(body) and body[i].startswith(MOVE):
                op.move_to, i = body[i][len(MOVE):], i + 1
            i = _parse_chunks(op, body, i)
            ops.append(op)
        else:
            raise PatchError(f"line {i + 1}: {header!r} is not a file operation (expected "
                             f"'{ADD}', '{DELETE}' or '{UPDATE}' and a path)")
    if not ops:
        raise PatchError("the patch contains no file operations")
    return ops


def _parse_chunks(op: _Op, body: list[str], i: int) -> int:
    """Read the chunks of an Update File operation from body[i]; the index after them."""
    while i < len(body):
        line = body[i]
        if not line.strip():  # blank lines between chunks
            i += 1
            continue
        if line.startswith("*"):  # the next operation (or the end of this one)
            break
        if line == "@@" or line.startswith("@@ "):
            chunk, i = _Chunk(line[3:] if line != "@@" else None), i + 1
        elif not op.chunks:  # only the first chunk may omit its '@@' line
            chunk = _Chunk(None)
        else:
            raise PatchError(f"Update File {op.path}: a chunk must start with '@@', got {line!r}")
        start = i
        while i < len(body):
            line, tag = body[i], body[i][:1]
            if line == END_OF_FILE and i > start:
                chunk.eof, i = True, i + 1
                break
            if tag in ("", " "):
                chunk.old.append(line[1:])
                chunk.new.append(line[1:])
            elif tag == "-":
                chunk.old.append(line[1:])
            elif tag == "+":
                chunk.new.append(line[1:])
            elif i > start:
                break
            else:
                raise PatchError(f"Update File {op.path}: unexpected line {line!r} (a chunk line "
                                 "starts with ' ', '+' or '-')")
            i += 1
        if i == start:
            raise PatchError(f"Update File {op.path}: a chunk without lines")
        op.chunks.append(chunk)
    if not op.chunks:
        raise PatchError(f"Update File {op.path}: empty change")
    return i


def _seek(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    """Where `pattern` starts at or after `start` (at the very end only, for `eof`), trying each
    matcher over every position before the next, more tolerant one."""
    if not pattern:
        return start
    last = len(lines) - len(pattern)
    if last < 0:
        return None
    first = last if eof else start
    for norm in MATCHERS:
        for at in range(first, last + 1):
            window = lines[at : at + len(pattern)]
            if all(norm(a) == norm(b) for a, b in zip(window, pattern, strict=True)):
                return at
    return None


def _updated(rel: str, content: str, chunks: list[_Chunk]) -> str:
    """Apply the chunks in order. A chunk's `@@` line, if any, is found first and the chunk's
    lines are sought after it; a chunk without old lines appends at the end of the file. The
    matched region is replaced by the patch's lines (context lines as the patch spells them);
    the result ends with a newline."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    cursor, edits = 0, []
    for chunk in chunks:
        if chunk.header is not None:
            at = _seek(lines, [chunk.header], cursor, False)
            if at is None:
                raise PatchError(f"Update File {rel}: could not find the line {chunk.header!r}")
            cursor = at + 1
        if not chunk.old:
            end = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            edits.append((end, 0, chunk.new))
            continue
        old, new = chunk.old, chunk.new
        found = _seek(lines, old, cursor, chunk.eof)
        if found is None and old[-1] == "":  # a trailing blank line standing for the newline
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            found = _seek(lines, old, cursor, chunk.eof)
        if found is None:
            where = " at the end of the file" if chunk.eof else ""
            raise PatchError(f"Update File {rel}: could not find the lines starting with "
                             f"{chunk.old[0]!r}{where}")
        edits.append((found, len(old), new))
        cursor = found + len(old)
    # from the end of the file back, so earlier positions stay valid; edits at one position
    # (two pure additions, or one and a chunk on the last empty line) keep the patch's order
    for at, count, replacement in reversed(sorted(edits, key=lambda e: e[0])):
        lines[at : at + count] = replacement
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

    def read(self, label: str, path: Path, *, on_disk: bool = False) -> str:
        """The file's text as the patch has left it so far (or as it is on disk)."""
        if not (path.is_file() if on_disk else self.is_file(path)):
            raise PatchError(f"{label}: not an existing file")
        content = None if on_disk else self.pending.get(path)
        try:
            return content if content is not None else path.read_bytes().decode("utf-8")
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
                if path.is_file():
                    path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content.encode("utf-8"))


def apply_patch(root: Path, text: str) -> list[Change]:
    """Parse the whole patch; check that every file it deletes or updates exists on disk and
    that every update applies to the file as it is on disk (an operation never relies on an
    earlier one of the same patch); then play the operations in order, each on the state the
    earlier ones left, and write. Nothing is written if any part fails."""
    plan, ops = _Plan(root), _parse(text)
    for op in ops:
        path, _ = plan.target(op.path)
        label = f"{op.kind.capitalize()} File {op.path}"
        if op.kind == "delete" and not path.is_file():
            raise PatchError(f"{label}: not an existing file")
        if op.kind == "update":
            _updated(op.path, plan.read(label, path, on_disk=True), op.chunks)
            if op.move_to:
                plan.target(op.move_to)
    changes = []
    for op in ops:
        path, rel = plan.target(op.path)
        label = f"{op.kind.capitalize()} File {op.path}"
        if op.kind == "add":
            plan.write(label, path, op.content)
            changes.append(Change("add", rel))
        elif op.kind == "delete":
            if not plan.is_file(path):
                raise PatchError(f"{label}: not an existing file")
            plan.pending[path] = None
            changes.append(Change("delete", rel))
        else:
            content = _updated(op.path, plan.read(label, path), op.chunks)
            dest, dest_rel = plan.target(op.move_to) if op.move_to else (path, rel)
            if dest != path:
                plan.pending[path] = None
            plan.write(f"Move to {op.move_to}" if op.move_to else label, dest, content)
            changes.append(Change("update", dest_rel))
    plan.commit()
    return changes


def summary(changes: list[Change]) -> str:
    """The tool's output: one line per file, A (added), M (updated or moved) or D (deleted)."""
    letters = {"add": "A", "delete": "D", "update": "M"}
    lines = "".join(f"{letters[c.action]} {c.path}\n" for c in changes)
    return f"Patch applied. Changed files:\n{lines}"

"""Memory citations in assistant messages: hiding the `<oai-mem-citation>` blocks from the
visible text (STRIP), parsing their bodies (CITE) and the cited thread ids (TID)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

OPEN = "<oai-mem-citation>"
CLOSE = "</oai-mem-citation>"
NOTE_SEP = "|note=["
U32_MAX = 0xFFFF_FFFF
# Unicode White_Space (what Rust's `str::trim` removes).
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_HEX = "[0-9a-fA-F]"
UUID_TEXT = re.compile(
    rf"(?:urn:uuid:|\{{)?{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\}}?"
    rf"|{_HEX}{{32}}")


@dataclass(frozen=True)
class Entry:
    path: str
    line_start: int
    line_end: int
    note: str


@dataclass
class Citation:
    entries: list[Entry] = field(default_factory=list)
    rollout_ids: list[str] = field(default_factory=list)


def strip_citations(text: str) -> tuple[str, list[str]]:
    """The visible text and the citation bodies, in order. An unclosed block runs to the end;
    blocks do not nest (the first close tag ends a block)."""
    visible: list[str] = []
    bodies: list[str] = []
    rest = text
    while (start := rest.find(OPEN)) != -1:
        visible.append(rest[:start])
        rest = rest[start + len(OPEN):]
        end = rest.find(CLOSE)
        if end == -1:
            bodies.append(rest)
            rest = ""
            break
        bodies.append(rest[:end])
        rest = rest[end + len(CLOSE):]
    visible.append(rest)
    return "".join(visible), bodies


def rust_lines(block: str) -> list[str]:
    """Rust `str::lines`: split on LF, drop one trailing CR per line, no empty last line."""
    parts = block.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _block(body: str, tag: str) -> str | None:
    start = body.find(f"<{tag}>")
    if start == -1:
        return None
    start += len(tag) + 2
    end = body.find(f"</{tag}>", start)
    return None if end == -1 else body[start:end]


def _u32(text: str) -> int | None:
    digits = text[1:] if text.startswith("+") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    value = int(digits)
    return value if value <= U32_MAX else None


def parse_entry(line: str) -> Entry | None:
    """`path:start-end|note=[text]`; anything malformed is None."""
    line = line.strip(WHITESPACE)
    location, sep, rest = line.rpartition(NOTE_SEP)
    if not line or not sep or not rest.endswith("]"):
        return None
    path, colon, span = location.rpartition(":")
    start, dash, end = span.partition("-")
    if not colon or not dash:
        return None
    first, last = _u32(start.strip(WHITESPACE)), _u32(end.strip(WHITESPACE))
    if first is None or last is None:
        return None
    return Entry(path.strip(WHITESPACE), first, last, rest[:-1].strip(WHITESPACE))


def parse_citation(bodies: list[str]) -> Citation | None:
    """Entries from each body's first `<citation_entries>` block; ids from its first
    `<rollout_ids>` block, else `<thread_ids>`; ids deduplicated by exact text."""
    citation = Citation()
    for body in bodies:
        entries = _block(body, "citation_entries")
        for line in rust_lines(entries) if entries is not None else []:
            entry = parse_entry(line)
            if entry is not None:
                citation.entries.append(entry)
        ids = _block(body, "rollout_ids")
        if ids is None:
            ids = _block(body, "thread_ids")
        for line in rust_lines(ids) if ids is not None else []:
            raw = line.strip(WHITESPACE)
            if raw and raw not in citation.rollout_ids:
                citation.rollout_ids.append(raw)
    return citation if citation.entries or citation.rollout_ids else None


def thread_id(raw: str) -> str | None:
    """The canonical (lowercase, hyphenated) id of a UUID in any spelling Rust's `uuid`
    crate accepts, else None."""
    return str(uuid.UUID(raw)) if UUID_TEXT.fullmatch(raw) else None


def cited_threads(citation: Citation) -> list[str]:
    """Valid ids in citation order; spellings of one UUID stay separate (TID-02)."""
    return [tid for tid in map(thread_id, citation.rollout_ids) if tid is not None]

"""Phase-2 input files in the memory root: `raw_memories.md` and `rollout_summaries/*.md`
(FS-01..FS-07)."""

from __future__ import annotations

import functools
import logging
import uuid
from datetime import UTC, datetime
from pathlib import Path

from memref.citations import UUID_TEXT, WHITESPACE
from memref.extensions import STAMP_FORMAT
from memref.files import remove_leftovers, write_atomic
from memref.selection import Selected

log = logging.getLogger(__name__)

RAW_MEMORIES = "raw_memories.md"
SUMMARIES_DIR = "rollout_summaries"
EMPTY_RAW_MEMORIES = "# Raw Memories\n\nNo raw memories yet.\n"
RAW_HEADER = "# Raw Memories\n\nMerged stage-1 raw memories (stable ascending thread-id order):\n\n"
BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SLUG_MAX = 60
GREGORIAN_TO_UNIX_100NS = 0x01B21DD213814000


def rfc3339(seconds: int) -> str:
    """Whole seconds, `+00:00` offset (FS-05)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def _uuid_time_s(value: uuid.UUID) -> float | None:
    """The timestamp a v1, v6 or v7 UUID carries, in Unix seconds."""
    if value.version == 7:
        return (value.int >> 80) / 1000
    if value.version == 1:
        return (value.time - GREGORIAN_TO_UNIX_100NS) / 10_000_000
    if value.version == 6:
        ticks = ((value.int >> 80) << 12) | ((value.int >> 64) & 0xFFF)
        return (ticks - GREGORIAN_TO_UNIX_100NS) / 10_000_000
    return None


def _short_hash(seed: int) -> str:
    """`seed mod 62⁴` as 4 base-62 digits, most significant first."""
    digits = []
    for _ in range(4):
        seed, digit = divmod(seed, 62)
        digits.append(BASE62[digit])
    return "".join(reversed(digits))


def sanitize_slug(slug: str) -> str:
    """ASCII alphanumerics lowercased, anything else `_`, 60 chars, trailing `_` dropped."""
    out = "".join(c.lower() if c.isascii() and c.isalnum() else "_" for c in slug[:SLUG_MAX])
    return out.rstrip("_")


@functools.lru_cache(maxsize=8192)
def summary_stem(thread_id: str, source_updated_at: int, slug: str | None) -> str:
    """`<UTC timestamp>-<4 base-62 chars>[-<slug>]` (FS-06); a consolidation asks for each
    stem three times (pruning, the file, raw_memories.md), so stems are remembered."""
    parsed = uuid.UUID(thread_id) if UUID_TEXT.fullmatch(thread_id) else None
    seconds = _uuid_time_s(parsed) if parsed is not None else None
    if seconds is None:
        seconds = source_updated_at
    stamp = datetime.fromtimestamp(int(seconds // 1), UTC).strftime(STAMP_FORMAT)
    if parsed is not None:
        seed = parsed.int & 0xFFFFFFFF
    else:
        seed = 0
        for byte in thread_id.encode("utf-8"):
            seed = (seed * 31 + byte) & 0xFFFFFFFF
    stem = f"{stamp}-{_short_hash(seed)}"
    cleaned = sanitize_slug(slug or "")
    return f"{stem}-{cleaned}" if cleaned else stem


def stem_of(memory: Selected) -> str:
    return summary_stem(memory.thread_id, memory.source_updated_at, memory.rollout_slug)


def render_summary(memory: Selected) -> str:
    lines = [f"thread_id: {memory.thread_id}", f"updated_at: {rfc3339(memory.source_updated_at)}",
             f"rollout_path: {memory.rollout_path}", f"cwd: {memory.cwd}"]
    if memory.git_branch:
        lines.append(f"git_branch: {memory.git_branch}")
    return "\n".join(lines) + "\n\n" + memory.rollout_summary + "\n"


def render_raw_memories(selected: list[Selected]) -> str:
    if not selected:
        return EMPTY_RAW_MEMORIES
    parts = [RAW_HEADER]
    for memory in selected:
        parts.append(
            f"## Thread `{memory.thread_id}`\n"
            f"updated_at: {rfc3339(memory.source_updated_at)}\n"
            f"cwd: {memory.cwd}\n"
            f"rollout_path: {memory.rollout_path}\n"
            f"rollout_summary_file: {stem_of(memory)}.md\n\n"
            f"{memory.raw_memory.strip(WHITESPACE)}\n\n")
    return "".join(parts)


def sync_inputs(root: Path, selected: list[Selected], raw_memories: bool = True) -> None:
    """Prune summaries no longer selected, write the selected ones, then `raw_memories.md`
    (layout v1 only: `raw_memories`, P2-V2-01)."""
    summaries = root / SUMMARIES_DIR
    summaries.mkdir(parents=True, exist_ok=True)
    remove_leftovers(root)
    remove_leftovers(summaries)
    keep = {stem_of(memory) for memory in selected}
    for entry in summaries.iterdir():
        if entry.name.endswith(".md") and entry.name[:-3] not in keep:
            try:
                entry.unlink()
            except OSError as exc:
                log.warning("could not remove stale rollout summary %s: %s", entry, exc)
    for memory in selected:
        write_atomic(summaries / f"{stem_of(memory)}.md", render_summary(memory))
    if raw_memories:
        write_atomic(root / RAW_MEMORIES, render_raw_memories(selected))

"""Read path: the memory fragment added to a new turn's developer instructions
(READ-INJ-01..READ-INJ-07); in layout v2, the instructions cut into pieces (READ-V2-01)."""

from __future__ import annotations

from pathlib import Path

from memref.citations import WHITESPACE
from memref.config import CodexConfig
from memref.prompts import memory_instructions, memory_instructions_v2
from memref.startup import memory_root
from memref.truncate import split_bytes, truncate_middle

SUMMARY_FILE = "memory_summary.md"
SUMMARY_TOKEN_LIMIT = 2_500
PIECE_MAX_BYTES = 8_900  # READ-V2-01


def read_summary(root: Path) -> str | None:
    """The trimmed, truncated summary, or None when it is missing, unreadable or blank."""
    try:
        text = (root / SUMMARY_FILE).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    summary = truncate_middle(text.strip(WHITESPACE), SUMMARY_TOKEN_LIMIT)
    return summary or None


def developer_fragments(home: Path, config: CodexConfig) -> list[str]:
    """The memory fragments of a new turn: one when memories are on and there is a summary."""
    if not (config.feature_memories and config.memories.use_memories):
        return []
    root = memory_root(home, config).absolute()
    summary = read_summary(root)
    if summary is None:
        return []
    if config.layout.name == "v2":
        return split_bytes(memory_instructions_v2(str(root), summary), PIECE_MAX_BYTES)
    return [memory_instructions(str(root), summary)]

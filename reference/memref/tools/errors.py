"""What a memory tool answers when it refuses a call: the message the model sees."""

from __future__ import annotations


class ToolError(Exception):
    """A refusal the model reads as the call's output (TOOL-GEN-04)."""


def invalid_path(path: str, reason: str) -> ToolError:
    return ToolError(f"path '{path}' {reason}")


def not_found(path: str) -> ToolError:
    return ToolError(f"path '{path}' was not found")


def io_error(exc: Exception) -> ToolError:
    return ToolError(f"I/O error while reading memories: {exc}")

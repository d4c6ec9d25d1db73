"""What checks raise when the implementation did not do what a rule says.

A check states its verdict in one sentence, with the expected and the actual value when there
are two to compare. A plain `assert actual == expected, "sentence"` gives the same record (the
plugin reads the comparison); these helpers cover what an `assert` cannot say well: a file or
row the implementation never produced, or exactly one of something.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")
_UNSET: Any = object()


class CheckFailed(AssertionError):
    """The check's verdict `fail`: `sentence` says what was wrong."""

    def __init__(self, sentence: str, *, expected: Any = _UNSET, actual: Any = _UNSET) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.expected = expected
        self.actual = actual

    @property
    def compared(self) -> bool:
        return self.expected is not _UNSET or self.actual is not _UNSET


def fail(sentence: str, *, expected: Any = _UNSET, actual: Any = _UNSET) -> NoReturn:
    raise CheckFailed(sentence, expected=expected, actual=actual)


def only(items: Sequence[T], what: str) -> T:
    """The single element of `items`; anything else is the implementation's failure."""
    if len(items) != 1:
        fail(f"expected exactly one {what}, found {len(items)}", expected=1, actual=len(items))
    return items[0]


def produced(path: Path, what: str | None = None) -> str:
    """The text of a file the implementation had to write."""
    if not path.is_file():
        state = "is not a regular file" if path.exists() else "was not written"
        fail(f"{what or path.name} {state} ({path})")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"{what or path.name} is not UTF-8 text ({path})")

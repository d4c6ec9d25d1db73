"""Turn what happened in one phase of a check into its status and a porter-readable account.

`fail`: the implementation did not do what the rule says, including producing nothing.
`error`: the adapter or the harness broke; nothing else.
"""

from __future__ import annotations

import linecache
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from _pytest.outcomes import Failed, Skipped

from memconform.adapters import AdapterError, Rejected, Unsupported
from memconform.rendering import (
    Normalizer,
    around_difference,
    cut,
    diff,
    render,
    sentence,
    window,
)
from memconform.scope import NotImplementedHere
from memconform.verdicts import CheckFailed

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent
_MISSING_FILE = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


@dataclass(frozen=True)
class Comparison:
    """The failing comparison of an `assert`, as pytest's assertion rewriting saw it."""

    op: str
    left: Any
    right: Any


@dataclass
class Outcome:
    status: str
    sentence: str = ""
    expected: str | None = None
    actual: str | None = None
    diff: str | None = None
    where: str | None = None
    stderr: str | None = None
    traceback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def message(self) -> str:
        """The account as one text: the sentence, then expected / actual and the diff."""
        lines = [self.sentence]
        for label, value in (("expected", self.expected), ("actual", self.actual)):
            if value is not None:
                body = value.replace("\n", "\n            ")
                lines.append(f"  {label + ':':<9} {body}")
        if self.diff:
            lines.append("  diff:\n    " + self.diff.replace("\n", "\n    "))
        if self.where and self.status == "error":
            lines.append(f"  at {self.where}")
        return "\n".join(lines)

    def fields(self) -> dict[str, Any]:
        """The record fields of this outcome (absent ones left out)."""
        out: dict[str, Any] = {"status": self.status, "sentence": self.sentence}
        for name in ("expected", "actual", "diff", "where", "stderr", "traceback"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


def classify(when: str, excinfo: Any, level: str, comparison: Comparison | None,
             normalize: Normalizer, *, full_traceback: bool = False) -> Outcome:
    """The outcome of one phase (`setup`, `call`, `teardown`) that raised or passed."""
    if excinfo is None:
        return Outcome("pass")
    exc = excinfo.value
    outcome = _classify(exc, level, comparison, normalize)
    if outcome.where is None and outcome.status in ("fail", "error"):
        outcome.where = _where(excinfo.tb)
    if full_traceback and outcome.status in ("fail", "error"):
        outcome.traceback = normalize("".join(traceback.format_exception(exc)))
    if when == "teardown" and outcome.status == "fail":
        outcome.sentence = f"after the check: {outcome.sentence}"
    return outcome


def _classify(exc: BaseException, level: str, comparison: Comparison | None,
              normalize: Normalizer) -> Outcome:
    if isinstance(exc, NotImplementedHere):
        return Outcome("not-implemented", sentence(normalize(str(exc.msg))))
    if isinstance(exc, Unsupported):
        text = normalize(str(exc.msg))
        if level == "MUST":
            return Outcome("fail", sentence(f"MUST-level check cannot be unsupported: {text}"))
        return Outcome("unsupported", sentence(text))
    if isinstance(exc, Failed) and str(exc).startswith("Timeout"):
        return Outcome("error", sentence(f"timeout: {normalize(str(exc))}"))
    if isinstance(exc, Skipped):
        return Outcome("skip", sentence(normalize(str(exc.msg))))
    if isinstance(exc, AdapterError):
        tail = normalize(exc.stderr[-1500:]) if exc.stderr else None
        return Outcome("error", sentence(f"the adapter broke: {normalize(str(exc))}"),
                       stderr=tail)
    if isinstance(exc, CheckFailed):
        return _verdict(exc, normalize)
    if isinstance(exc, AssertionError):
        return _assertion(exc, comparison, normalize)
    if isinstance(exc, Rejected):
        return Outcome("fail", sentence("the implementation refused the request: "
                                        + normalize(str(exc))))
    if isinstance(exc, Failed):
        return Outcome("fail", sentence(normalize(str(exc.msg) or "the check failed")))
    if isinstance(exc, _MISSING_FILE) and getattr(exc, "filename", None):
        name = normalize(str(exc.filename))
        if name.startswith("<tmp>"):
            state = {FileNotFoundError: "does not exist", NotADirectoryError:
                     "has a non-directory on its path", IsADirectoryError: "is a directory"}
            return Outcome("fail", sentence(f"{name} {state[type(exc)]}: the implementation "
                                            "did not write it"))
    text = normalize(f"{type(exc).__name__}: {exc}")
    return Outcome("error", sentence(f"harness error: {text}"))


def _verdict(exc: CheckFailed, normalize: Normalizer) -> Outcome:
    outcome = Outcome("fail", sentence(normalize(exc.sentence)))
    if exc.compared:
        expected = render(exc.expected, normalize)
        actual = render(exc.actual, normalize)
        outcome.diff = diff(expected, actual)
        outcome.expected, outcome.actual = around_difference(expected, actual)
    return outcome


def _assertion(exc: AssertionError, comparison: Comparison | None,
               normalize: Normalizer) -> Outcome:
    text = str(exc)
    said = "" if text.startswith("assert ") else text.split("\nassert ", 1)[0]
    outcome = Outcome("fail", sentence(normalize(said)) if said.strip() else "")
    if comparison is not None:
        _compare(outcome, comparison, normalize)
    if not outcome.sentence:
        source = _assert_source(exc.__traceback__)
        outcome.sentence = sentence(f"`{source}` does not hold" if source
                                    else "an assertion of the check does not hold")
    return outcome


def _compare(outcome: Outcome, c: Comparison, normalize: Normalizer) -> None:
    left, right = render(c.left, normalize), render(c.right, normalize)
    if c.op in ("==", "is"):
        outcome.diff = diff(right, left)
        outcome.expected, outcome.actual = around_difference(right, left)
    elif c.op in ("!=", "is not"):
        outcome.expected, outcome.actual = f"anything but {cut(right)}", cut(left)
    elif c.op == "in":
        outcome.expected, outcome.actual = f"contains {cut(left)}", cut(right)
    elif c.op == "not in":
        at = right.find(left) if isinstance(c.right, str) and isinstance(c.left, str) else -1
        outcome.expected = f"does not contain {cut(left)}"
        outcome.actual = window(right, at) if at >= 0 else cut(right)
    else:
        outcome.expected, outcome.actual = f"{c.op} {cut(right)}", cut(left)


def _frames(tb: TracebackType | None) -> list[tuple[str, int]]:
    return [(frame.f_code.co_filename, lineno) for frame, lineno in traceback.walk_tb(tb)]


def _ours(filename: str) -> str | None:
    try:
        return Path(filename).resolve().relative_to(_PACKAGE_ROOT).as_posix()
    except ValueError:
        return None


def _where(tb: TracebackType | None) -> str | None:
    """`memconform/…/module.py:LINE` of the innermost frame in the memconform package."""
    for filename, lineno in reversed(_frames(tb)):
        rel = _ours(filename)
        if rel is not None and rel.startswith("memconform/"):
            return f"{rel}:{lineno}"
    return None


def _assert_source(tb: TracebackType | None) -> str | None:
    for filename, lineno in reversed(_frames(tb)):
        if _ours(filename) is not None:
            line = linecache.getline(filename, lineno).strip()
            if line.startswith("assert "):
                return line.removeprefix("assert ").rstrip(",(\\")
    return None

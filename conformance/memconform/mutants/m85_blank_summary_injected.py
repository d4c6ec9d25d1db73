"""A whitespace-only memory summary is still injected (no trim before the emptiness test)."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import injection
from memref.adapter import ReferenceAdapter
from memref.truncate import truncate_middle

MUTANT = Mutant("m85-blank-summary-injected", __doc__ or "",
                ("read.inj.summary[whitespace-only]",))


def read_summary(root: Path) -> str | None:
    try:
        text = (root / injection.SUMMARY_FILE).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return truncate_middle(text, injection.SUMMARY_TOKEN_LIMIT) or None


def factory() -> ReferenceAdapter:
    patch(injection, "read_summary", read_summary)
    return ReferenceAdapter()

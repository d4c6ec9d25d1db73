"""read reports `truncated` whenever it starts after line 1."""

from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import calls, reading


def read_file(root: Path, path: str, line_offset: int | None,
              max_lines: int | None) -> dict[str, Any]:
    result = reading.read_file(root, path, line_offset, max_lines)
    result["truncated"] = result["truncated"] or result["start_line_number"] > 1
    return result


MUTANT = Mutant("m108-read-truncated-after-offset", __doc__ or "",
                ("read.tool.read[from-a-line]", "read.tool.read[more-lines-than-the-file]"))


def factory() -> ReferenceAdapter:
    patch(calls, "RUNNERS", {**calls.RUNNERS, "read": read_file})
    return ReferenceAdapter()

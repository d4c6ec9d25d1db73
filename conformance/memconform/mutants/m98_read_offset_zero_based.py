"""read counts line_offset from zero: line 2 starts after the second newline."""

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import reading

MUTANT = Mutant("m98-read-offset-zero-based", __doc__ or "",
                ("read.tool.read[from-a-line]", "read.tool.read[some-lines]"))
_start = reading.start_of_line


def factory() -> ReferenceAdapter:
    patch(reading, "start_of_line", lambda text, line: _start(text, line + 1) if line > 1
          else 0)
    return ReferenceAdapter()

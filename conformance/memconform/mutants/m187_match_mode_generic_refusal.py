"""Every malformed `match_mode` (not an object, no `type`, `all_within_lines` without
`line_count`) is refused with one generic text that names neither the problem nor the field."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import arguments
from memref.tools.errors import ToolError

MUTANT = Mutant("m187-match-mode-generic-refusal", __doc__ or "",
                ("read.tool.args[match-mode-not-a-map-refused]",
                 "read.tool.args[match-mode-type-missing-refused]",
                 "read.tool.args[window-line-count-missing-refused]"))
_match_mode = arguments._match_mode


def match_mode(field: arguments.Field, value: Any) -> dict[str, Any]:
    try:
        return _match_mode(field, value)
    except ToolError:
        raise ToolError("match_mode is not acceptable") from None


def factory() -> ReferenceAdapter:
    patch(arguments, "_match_mode", match_mode)
    return ReferenceAdapter()

"""A count sent as an integral float (`1.0`) is read as the integer, not refused."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import arguments

MUTANT = Mutant("m147-integral-float-counts-accepted", __doc__ or "",
                ("read.tool.args[integral-float-count-refused]",))
_value = arguments._value


def value(field: arguments.Field, given: Any) -> Any:
    if field.kind == "uint" and isinstance(given, float) and given.is_integer():
        given = int(given)
    return _value(field, given)


def factory() -> ReferenceAdapter:
    patch(arguments, "_value", value)
    return ReferenceAdapter()

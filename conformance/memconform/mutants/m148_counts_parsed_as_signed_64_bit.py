"""Counts are parsed as signed 64-bit integers: anything above 2^63 - 1 is refused as an invalid
number, though it fits the unsigned 64-bit count."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import arguments

MUTANT = Mutant("m148-counts-parsed-as-signed-64-bit", __doc__ or "",
                ("read.tool.args[count-of-u64-max-accepted]",))
_value = arguments._value


def value(field: arguments.Field, given: Any) -> Any:
    if field.kind == "uint" and isinstance(given, int) and given > 2**63 - 1:
        raise arguments.refuse("invalid number")
    return _value(field, given)


def factory() -> ReferenceAdapter:
    patch(arguments, "_value", value)
    return ReferenceAdapter()

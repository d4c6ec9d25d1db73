"""The local shell action's `timeout_ms` takes any Python int, booleans included: a `true` or
`false` timeout is sent as it is instead of making the item not fit (skipped)."""

from typing import Any

from memconform.mutants import Mutant, read_shell_exec_field
from memref import rollout_input as ri
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m181-shell-timeout-takes-booleans", __doc__ or "",
                ("p1.in.item-shape[shell-timeout-bounds]",))


def u64_or_bool(value: Any) -> int:
    # the bool-is-an-int trap: isinstance(True, int) holds
    if not isinstance(value, int) or not 0 <= value < 2 ** 64:
        raise ri.UnfitItem("expected an unsigned integer")
    return value


def factory() -> ReferenceAdapter:
    read_shell_exec_field("timeout_ms", u64_or_bool)
    return ReferenceAdapter()

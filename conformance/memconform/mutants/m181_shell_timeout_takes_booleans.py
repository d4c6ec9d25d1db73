"""The local shell action's `timeout_ms` takes any Python int, booleans included: a `true` or
`false` timeout is sent as it is instead of making the item not fit (skipped)."""

from typing import Any

from memconform.mutants import Mutant, patch
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
    action = ri._Tagged({"exec": ri._Record(
        "exec", (("command", ri.REQUIRED, ri._List(ri._string)),
                 ("timeout_ms", ri.NULLABLE, u64_or_bool),
                 ("working_directory", ri.NULLABLE, ri._string),
                 ("env", ri.NULLABLE, ri._string_map), ("user", ri.NULLABLE, ri._string)))})
    status = ri._OneOf(("completed", "in_progress", "incomplete"))
    shell = ri._Record("local_shell_call", (ri._ID, ("call_id", ri.NULLABLE, ri._string),
                                            ("status", ri.REQUIRED, status),
                                            ("action", ri.REQUIRED, action), ri._METADATA))
    patch(ri, "ITEM_SHAPES", {**ri.ITEM_SHAPES, "local_shell_call": shell})
    return ReferenceAdapter()

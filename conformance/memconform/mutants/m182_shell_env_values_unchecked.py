"""The local shell action's `env` must be an object, but its values are copied without being
checked as strings: an item whose env maps a name to a number or null is sent instead of being
skipped as not fitting its type."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import rollout_input as ri
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m182-shell-env-values-unchecked", __doc__ or "",
                ("p1.in.item-shape[wrong-element-types]",))


def any_map(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ri.UnfitItem("expected an object")
    return dict(value)


def factory() -> ReferenceAdapter:
    action = ri._Tagged({"exec": ri._Record(
        "exec", (("command", ri.REQUIRED, ri._List(ri._string)),
                 ("timeout_ms", ri.NULLABLE, ri._u64),
                 ("working_directory", ri.NULLABLE, ri._string),
                 ("env", ri.NULLABLE, any_map), ("user", ri.NULLABLE, ri._string)))})
    status = ri._OneOf(("completed", "in_progress", "incomplete"))
    shell = ri._Record("local_shell_call", (ri._ID, ("call_id", ri.NULLABLE, ri._string),
                                            ("status", ri.REQUIRED, status),
                                            ("action", ri.REQUIRED, action), ri._METADATA))
    patch(ri, "ITEM_SHAPES", {**ri.ITEM_SHAPES, "local_shell_call": shell})
    return ReferenceAdapter()

"""The local shell action's `env` must be an object, but its values are copied without being
checked as strings: an item whose env maps a name to a number or null is sent instead of being
skipped as not fitting its type."""

from typing import Any

from memconform.mutants import Mutant, read_shell_exec_field
from memref import rollout_input as ri
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m182-shell-env-values-unchecked", __doc__ or "",
                ("p1.in.item-shape[wrong-element-types]",))


def any_map(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ri.UnfitItem("expected an object")
    return dict(value)


def factory() -> ReferenceAdapter:
    read_shell_exec_field("env", any_map)
    return ReferenceAdapter()

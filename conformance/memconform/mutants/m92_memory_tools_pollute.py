"""Calls to the memory tools count as external context and pollute the thread."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import pollution
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m92-memory-tools-pollute", __doc__ or "",
                ("read.poll.item[memory-tool-call-does-not]",))
_external = pollution.brings_external_context


def brings_external_context(item: dict[str, Any]) -> bool:
    return item.get("namespace") == "memories" or _external(item)


def factory() -> ReferenceAdapter:
    patch(pollution, "brings_external_context", brings_external_context)
    return ReferenceAdapter()

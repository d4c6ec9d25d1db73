"""External context pollutes threads even with disable_on_external_context off."""

from dataclasses import replace
from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref import pollution
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig

MUTANT = Mutant("m93-pollution-ignores-switch", __doc__ or "",
                ("read.poll.item[flag-off-by-default]", "read.poll.item[flag-off]"))
_record = pollution.record_item


def record_item(home: Path, config: CodexConfig, thread_id: str, item: dict[str, Any],
                now: int) -> bool:
    forced = replace(config, memories=replace(config.memories,
                                              disable_on_external_context=True))
    return _record(home, forced, thread_id, item, now)


def factory() -> ReferenceAdapter:
    patch(pollution, "record_item", record_item)
    return ReferenceAdapter()

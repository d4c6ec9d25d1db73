"""A rollout line that is not JSON fails the whole extraction instead of being skipped."""

import json
from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase1, rollout_input
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m120-bad-line-fails-job", __doc__ or "", ("p1.in.unparsable-line",))
_load_items = rollout_input.load_items


def load_items(path: Path) -> list[dict[str, Any]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                json.loads(line)
            except json.JSONDecodeError as exc:
                raise rollout_input.RolloutError(f"{path}:{number}: {exc}") from exc
    return _load_items(path)


def factory() -> ReferenceAdapter:
    patch(phase1, "load_items", load_items)
    return ReferenceAdapter()

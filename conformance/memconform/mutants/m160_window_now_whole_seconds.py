"""The idle/age window is computed from "now" in whole seconds (now_ms rounded down), not from
now_ms itself."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import candidates, phase1
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m160-window-now-whole-seconds", __doc__ or "",
                ("p1.cand.window-bounds[idle-exactly-one-hour-now-at-999ms]",
                 "p1.cand.window-bounds[idle-exactly-one-hour-now-at-1ms]",
                 "p1.cand.window-bounds[age-one-ms-over-now-at-999ms]"))
_scan = candidates.scan


def scan(con: Any, *, now_ms: int, **rest: Any) -> Any:
    return _scan(con, now_ms=now_ms // 1000 * 1000, **rest)


def factory() -> ReferenceAdapter:
    patch(phase1, "scan", scan)
    return ReferenceAdapter()

"""In-process transport: the implementation object's `handle(message) -> message`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memconform.adapters.base import AdapterError, Transport


class InProcessTransport(Transport):
    """Messages still travel as JSON text, so both transports share one contract."""

    def __init__(self, factory: Callable[[], Any], *, label: str) -> None:
        self.factory = factory
        self.label = label
        self.impl = factory()
        if not callable(getattr(self.impl, "handle", None)):
            raise TypeError(f"{label}: factory result has no handle(message) method")

    def fresh(self) -> InProcessTransport:
        return InProcessTransport(self.factory, label=self.label)

    def exchange(self, line: str, timeout_s: float) -> str:
        try:
            reply = self.impl.handle(json.loads(line))
            return json.dumps(reply)
        except Exception as exc:
            raise AdapterError("crash", f"{self.label}: handle() raised {exc!r}") from exc

    def close(self) -> None:
        pass

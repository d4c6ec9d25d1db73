"""The reference with three small differences, for the harness's `memconform diff` tests:
every consolidation request carries `"service_tier": "flex"` (one request field), and after a
startup the global job's `retry_remaining` is one higher (one row) and `raw_memories.md` ends
with `.` instead of a newline (one file byte)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memconform.mutants import patch
from memref import agent, responses
from memref.adapter import ReferenceAdapter

_send = responses.stream_response


def _send_with_tier(provider: Any, body: dict[str, Any], **kwargs: Any) -> Any:
    return _send(provider, {**body, "service_tier": "flex"}, **kwargs)


class Differs(ReferenceAdapter):
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        answer = super().handle(message)
        if message.get("op") == "startup" and answer.get("ok"):
            home = Path(message["args"]["home"])
            raw = home / "memories" / "raw_memories.md"
            if raw.is_file():
                raw.write_bytes(raw.read_bytes()[:-1] + b".")
            with sqlite3.connect(home / "memories_1.sqlite") as con:
                con.execute("UPDATE jobs SET retry_remaining = retry_remaining + 1 "
                            "WHERE kind = 'memory_consolidate_global'")
        return answer


def factory() -> Differs:
    patch(agent, "stream_response", _send_with_tier)
    return Differs()

"""A stdio adapter for a read-path-only library: the reference's read operations, nothing
else, with `scope = ["read"]` in its handshake (a partial implementation)."""

from __future__ import annotations

import json
import sys
from typing import Any

from memref.adapter import ReferenceAdapter

READ_OPS = ("citations.parse", "turn.message", "turn.instructions", "turn.tools", "tools.call",
            "turn.event")
CAPABILITIES = ["clock.inject", "citations.parse", "turn.message", "turn.instructions",
                "memory.tools", "turn.event"]


def handle(reference: ReferenceAdapter, message: dict[str, Any]) -> dict[str, Any]:
    op, seq = message.get("op"), message.get("seq", 0)
    if op == "start":
        reply = reference.handle(message)
        reply["result"]["implementation"]["name"] = "read-only"
        reply["result"]["capabilities"] = CAPABILITIES
        reply["result"]["scope"] = ["read"]
        return reply
    if op == "stop" or op in READ_OPS:
        return reference.handle(message)
    return {"seq": seq, "ok": False,
            "error": {"kind": "unsupported", "message": f"{op} is not part of the read path"}}


def main() -> int:
    reference = ReferenceAdapter()
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        sys.stdout.write(json.dumps(handle(reference, message)) + "\n")
        sys.stdout.flush()
        if message.get("op") == "stop":
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

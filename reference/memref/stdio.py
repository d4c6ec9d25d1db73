"""Serve the reference over the stdio transport: `python -m memref.stdio`.

One JSON request per stdin line, one JSON response per stdout line; logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import sys

from memref.adapter import ReferenceAdapter


def serve() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    adapter = ReferenceAdapter()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"memref.stdio: ignoring non-JSON request: {exc}", file=sys.stderr)
            continue
        reply = adapter.handle(message)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if message.get("op") == "stop":
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())

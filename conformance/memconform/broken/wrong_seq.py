"""Answers correctly, but echoes the wrong sequence number."""

import json
import sys

from memref.adapter import ReferenceAdapter

adapter = ReferenceAdapter()
for line in sys.stdin:
    reply = adapter.handle(json.loads(line))
    reply["seq"] = reply["seq"] + 1000
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()

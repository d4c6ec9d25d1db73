"""Answers valid JSON with the right seq that breaks the v1 result schemas."""

import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"seq": request["seq"], "ok": True,
                                 "result": {"unexpected": True}}) + "\n")
    sys.stdout.flush()

"""Answers every request with a line that is not JSON."""

import sys

for _line in sys.stdin:
    sys.stdout.write("this is not json\n")
    sys.stdout.flush()

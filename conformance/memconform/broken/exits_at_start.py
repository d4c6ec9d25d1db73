"""Exits before answering anything."""

import sys

sys.stderr.write("broken adapter: exiting at start\n")
raise SystemExit(7)

"""memconform: a conformance harness for Codex-style agent memory pipelines."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1

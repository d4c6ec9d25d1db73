"""memref: a compact reference implementation of the Codex 0.144.6 memories pipeline."""

__version__ = "0.1.0"

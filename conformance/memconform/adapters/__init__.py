"""Adapters: how the harness reaches an implementation (`--impl` specs)."""

from __future__ import annotations

import importlib
import shlex

from memconform.adapters.base import Adapter, AdapterError, Rejected, Transport, Unsupported
from memconform.adapters.inprocess import InProcessTransport
from memconform.adapters.stdio import StdioTransport

__all__ = ["Adapter", "AdapterError", "Rejected", "Transport", "Unsupported", "resolve"]


class ImplSpecError(ValueError):
    """An `--impl` value that names no usable implementation."""


def _python(target: str) -> InProcessTransport:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ImplSpecError(f"python:{target}: expected python:MODULE:FACTORY")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImplSpecError(f"python:{target}: cannot import {module_name}: {exc}") from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ImplSpecError(f"python:{target}: {module_name} has no callable {attr!r}")
    return InProcessTransport(factory, label=f"python:{target}")


def transport_for(spec: str) -> Transport:
    """Build the transport for `ref`, `python:MODULE:FACTORY` or `exec:COMMAND`."""
    if spec == "ref":
        return _python("memref.adapter:factory")
    if spec.startswith("ref@"):
        from memref.adapter import factory

        try:
            factory(spec.removeprefix("ref@"))
        except ValueError as exc:
            raise ImplSpecError(f"--impl {spec!r}: {exc}") from None
        return InProcessTransport(lambda: factory(spec.removeprefix("ref@")), label=spec)
    kind, sep, rest = spec.partition(":")
    if kind == "python" and sep:
        return _python(rest)
    if kind == "exec" and sep:
        argv = shlex.split(rest)
        if not argv:
            raise ImplSpecError("exec: needs a command, e.g. exec:'python -m memref.stdio'")
        return StdioTransport(argv)
    if kind.startswith(("codex@", "codex/")) or kind == "codex":
        from memconform.codex.adapter import CodexAdapter
        from memconform.codex.binary import CodexBinaryError, parse_spec
        try:
            version, layout, path = parse_spec(spec)
        except CodexBinaryError as exc:
            raise ImplSpecError(str(exc)) from None
        return InProcessTransport(lambda: CodexAdapter(path, version, layout), label=spec)
    raise ImplSpecError(
        f"--impl {spec!r}: expected ref[@VERSION], python:MODULE:FACTORY, exec:COMMAND or "
        f"codex[@VERSION][/LAYOUT][:PATH]"
    )


def resolve(spec: str, *, timeout_s: float) -> Adapter:
    return Adapter(transport_for(spec), spec=spec, timeout_s=timeout_s)

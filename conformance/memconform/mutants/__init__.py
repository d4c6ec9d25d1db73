"""Mutants: copies of the reference with one deliberate bug, and the checks that must kill it.

Each local-profile module defines `MUTANT` and a `factory()` usable as
`--impl python:MODULE:factory`; each cloud-profile module (`profile="cloud"`) is a service run
as `--impl serve:MODULE`: it patches the reference service, then serves it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class MutantError(RuntimeError):
    """A mutant module that cannot be loaded here."""


@dataclass(frozen=True)
class Mutant:
    id: str
    description: str
    killers: tuple[str, ...]
    profile: str = "local"


def patch(target: object, name: str, value: object) -> None:
    """Replace `target.name`; a renamed target makes the mutant fail loudly, not vanish."""
    if not hasattr(target, name):
        raise AttributeError(f"mutant target {target!r} has no attribute {name!r}")
    setattr(target, name, value)


def waive_refusal(word: str) -> None:
    """Make the reference agent's path confinement let through the refusals that mention
    `word` (the other refusals stay)."""
    from memref import patch as patching

    original = patching.confined

    def confined(root: Path, rel: str) -> Path:
        try:
            return original(root, rel)
        except patching.PatchError as exc:
            if word in str(exc):
                return root / rel
            raise

    patch(patching, "confined", confined)


def read_shell_exec_field(name: str, shape: Callable[[Any], Any]) -> None:
    """Make the reference read the `name` field of a local shell call's exec action with
    `shape`; the rest of its item shapes stay as they are."""
    from memref import rollout_input as ri

    def swapped(record: object, field: str, new: Callable[[Any], Any]) -> ri._Record:
        if not isinstance(record, ri._Record) or field not in {f[0] for f in record.fields}:
            raise AttributeError(f"mutant target {record!r:.80} has no field {field!r}")
        return replace(record, fields=tuple((n, presence, new if n == field else old)
                                            for n, presence, old in record.fields))

    shell = ri.ITEM_SHAPES["local_shell_call"]
    assert isinstance(shell, ri._Record)
    action = next(s for n, _, s in shell.fields if n == "action")
    assert isinstance(action, ri._Tagged)
    exec_action = swapped(action.variants["exec"], name, shape)
    action = replace(action, variants={**action.variants, "exec": exec_action})
    patch(ri, "ITEM_SHAPES", {**ri.ITEM_SHAPES,
                              "local_shell_call": swapped(shell, "action", action)})


def discover() -> list[tuple[str, Mutant]]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        name = f"{__name__}.{info.name}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            raise MutantError(f"mutant {info.name} needs {exc.name}: install the cloud extra "
                              "(pip install 'memconform[cloud]')") from exc
        mutant = getattr(module, "MUTANT", None)
        if not isinstance(mutant, Mutant):
            raise TypeError(f"{name} defines no MUTANT")
        found.append((name, mutant))
    return found


def serve_patched(apply: Callable[[], None]) -> int:
    """Apply a cloud mutant's patches, then run the reference service's command line."""
    from memref.cloud import serve

    apply()
    return serve.main()


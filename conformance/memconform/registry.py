"""Check metadata: every check carries a stable id, its spec rules, level, area and `since`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

LEVELS = ("MUST", "SHOULD", "MAY")
AREAS = {
    "protocol": "Adapter handshake and wiring",
    "config": "config.toml keys, defaults, clamps and errors",
    "startup": "Startup guards, memory root and extension seeding",
    "store": "On-disk SQLite schema of the memories store",
    "tokens": "Token counting rules",
    "phase1": "Phase 1: candidates, stage-1 jobs, input, output, redaction, retention, races",
    "phase2": "Phase 2: the consolidation job, selection, files, git workspace, agent",
    "read": "Read path: citations, usage, injection, memory tools, pollution",
    "cloud.settings": "Cloud profile: per-user auto-memory settings",
    "cloud.flags": "Cloud profile: per-task memory flags",
    "cloud.extraction": "Cloud profile: the extraction gates, content and log",
    "cloud.injection": "Cloud profile: memories in a task's first turn",
    "cloud.authz": "Cloud profile: authentication and isolation between users and projects",
}
MARKER = "memcheck"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CheckMeta:
    id: str
    title: str
    rules: tuple[str, ...]
    level: str
    area: str
    since: str
    needs: tuple[str, ...] = ()
    smoke: bool = False
    codex_since: str | None = None  # the Codex release the rule begins in (None: 0.144.6)
    layout: str | None = None  # the one memory layout the check applies to (None: both)

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"check {self.id}: level {self.level!r} not in {LEVELS}")
        if self.area not in AREAS:
            raise ValueError(f"check {self.id}: unknown area {self.area!r}")
        if not self.rules:
            raise ValueError(f"check {self.id}: names no spec rule")
        if self.layout not in (None, "v1", "v2"):
            raise ValueError(f"check {self.id}: layout {self.layout!r} is not v1 or v2")
        if self.codex_since is not None:
            from memconform.codex.releases import ReleaseError, get

            try:
                get(self.codex_since)
            except ReleaseError as exc:
                raise ValueError(f"check {self.id}: codex_since: {exc}") from None


def check(id: str, *, title: str, rules: str | tuple[str, ...], level: str, area: str,
          since: str = "0.1.0", needs: tuple[str, ...] = (), smoke: bool = False,
          codex_since: str | None = None, layout: str | None = None) -> Callable[[F], F]:
    """Declare a pytest function as a conformance check (`codex_since`: a rule that begins in
    that Codex release does not apply to an implementation following an earlier one; `layout`:
    the check applies to implementations using that memory layout only)."""
    meta = CheckMeta(id=id, title=title, rules=(rules,) if isinstance(rules, str) else rules,
                     level=level, area=area, since=since, needs=needs, smoke=smoke,
                     codex_since=codex_since, layout=layout)

    def apply(fn: F) -> F:
        marked: F = getattr(pytest.mark, MARKER)(meta)(fn)
        return marked

    return apply


def meta_of(item: pytest.Item) -> CheckMeta | None:
    marker = item.get_closest_marker(MARKER)
    return marker.args[0] if marker is not None else None


def id_covers(key: str, check_id: str) -> bool:
    """`key` names `check_id` itself, a case of it (`key[...]`), or a dotted prefix of it."""
    return check_id == key or check_id.startswith((key + ".", key + "["))


def stable_id(item: pytest.Item, meta: CheckMeta) -> str:
    """The check id, plus the parameter id for a parametrized check."""
    callspec = getattr(item, "callspec", None)
    return f"{meta.id}[{callspec.id}]" if callspec is not None else meta.id

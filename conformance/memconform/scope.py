"""Partial implementations: the areas an implementation declares, and what that excuses.

An implementation may answer `start` with `scope`: the local areas (`read`) or check-id
prefixes (`read.cite`) it implements. Other checks report `not-implemented` without running.
A full implementation (no `scope`) declares every core capability; a scoped one needs a core
capability only when its scope reaches an area that cannot be checked without it.
"""

from __future__ import annotations

from _pytest.outcomes import Skipped

from memconform.registry import id_covers

LOCAL_AREAS = ("config", "startup", "store", "tokens", "phase1", "phase2", "read")
ALWAYS = "protocol"
CORE_NEEDED_BY = {
    "startup": frozenset({"startup", "store", "phase1", "phase2"}),
    "agent.apply_patch": frozenset({"phase2"}),
}


class NotImplementedHere(Skipped):
    """The check lies outside what the implementation declares it implements."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg=msg, pytrace=False)


def in_scope(check_id: str, area: str, scope: frozenset[str] | None) -> bool:
    if scope is None or area == ALWAYS:
        return True
    return area in scope or any(id_covers(entry, check_id) for entry in scope)


def required_core(scope_areas: set[str] | None) -> set[str]:
    """The core capabilities an implementation must declare, given the areas its scope
    reaches (None: a full implementation)."""
    if scope_areas is None:
        return set(CORE_NEEDED_BY)
    return {cap for cap, areas in CORE_NEEDED_BY.items() if areas & scope_areas}


def gate(check_id: str, area: str, needs: list[str], scope: frozenset[str] | None,
         capabilities: frozenset[str]) -> str | None:
    """Why a check is not implemented here (None: it runs)."""
    if scope is None:
        return None
    label = ", ".join(sorted(scope)) or "nothing"
    if not in_scope(check_id, area, scope):
        return f"{check_id} is outside the implementation's scope ({label})"
    for capability in needs:
        if capability in CORE_NEEDED_BY and capability not in capabilities:
            return (f"needs {capability}, which the implementation does not declare "
                    f"(scope: {label})")
    return None


def release_gate(codex_since: str | None, follows: tuple[str, str]) -> str | None:
    """Why a rule does not apply to an implementation following an earlier release."""
    from memconform.codex.releases import at_least

    if codex_since is None or at_least(follows[0], codex_since):
        return None
    return (f"the rule applies from Codex {codex_since} on; the implementation follows "
            f"Codex {follows[0]}")


def layout_gate(layout: str | None, follows: tuple[str, str]) -> str | None:
    """Why a check about one memory layout does not apply to an implementation using the other."""
    if layout is None or layout == follows[1]:
        return None
    return (f"the check is about the {layout} memory layout; the implementation uses "
            f"{follows[1]}")

"""CFG: how `config.toml`'s `[features]` and `[memories]` tables become effective settings.

These reach the rules through the optional `config.resolve` operation; the end-to-end effect
of each setting is pinned by the pipeline checks of its area.
"""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter, Rejected
from memconform.codex import releases
from memconform.home import CodexHome
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

CASES = fixture_json("config", "cases.json")
NEEDS = ("config.resolve",)


def _resolve(impl: Adapter, home: CodexHome, memories_toml: str, features: str = "memories = "
             "true") -> dict[str, Any]:
    home.write_raw_config(f"[features]\n{features}\n\n[memories]\n{memories_toml}\n")
    result: dict[str, Any] = impl.call("config.resolve", {"home": str(home.path)})
    return result


def _assert_pins(impl: Adapter, home: CodexHome, case: dict[str, Any], wrong: str) -> None:
    """The keys a case pins have exactly the case's values; `wrong` says what it means when
    they do not."""
    memories = _resolve(impl, home, case["toml"])["memories"]
    assert {k: memories.get(k) for k in case["memories"]} == case["memories"], wrong


def _cases(group: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", CASES[group], ids=[c["id"] for c in CASES[group]])


# keys of later releases, pinned by their own checks
LATER_KEYS = ("version", "dual_write", "consolidation_service_tier")


@check("config.defaults", title="an empty [memories] table gives Codex's twelve defaults",
       rules="CFG-01", level="SHOULD", area="config", needs=NEEDS)
def test_defaults(impl: Adapter, home: CodexHome) -> None:
    release = releases.get(impl.handshake.follows[0])
    expected = {**CASES["defaults"], "extract_model": release.stage1_model,
                "consolidation_model": release.consolidation_model}
    resolved = _resolve(impl, home, "")["memories"]
    later = {k: resolved.pop(k) for k in LATER_KEYS if k in resolved}  # pinned by LAYOUT-*
    assert resolved == expected, \
        f"an empty [memories] table does not give the defaults of Codex {release.version}"
    assert later.get("dual_write", False) is False, "dual_write must default to false"


@check("config.clamp", title="out-of-range integers are clamped to Codex's bounds",
       rules="CFG-02", level="SHOULD", area="config", needs=NEEDS)
@_cases("clamps")
def test_clamp(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    _assert_pins(impl, home, case, f"`{case['toml']}` does not give Codex's clamped value")


@check("config.alias", title="the legacy alias sets disable_on_external_context",
       rules="CFG-03", level="SHOULD", area="config", needs=NEEDS)
@_cases("aliases")
def test_alias(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    _assert_pins(impl, home, case, f"`{case['toml']}` does not set disable_on_external_context")


@check("config.ignored", title="unknown [memories] keys are ignored, known ones still apply",
       rules="CFG-03", level="SHOULD", area="config", needs=NEEDS)
@_cases("ignored")
def test_ignored(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    _assert_pins(impl, home, case, "the known [memories] keys do not take their values (unknown "
                 "and retired keys must be ignored)")


@check("config.rejected", title="a value of the wrong type, or one its integer type cannot "
       "hold, is refused with a message naming the key", rules=("CFG-04", "CFG-02"),
       level="SHOULD", area="config", needs=NEEDS)
@_cases("rejected")
def test_rejected(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    try:
        _resolve(impl, home, case["toml"])
    except Rejected as refused:
        assert case["key"] in str(refused), "the refusal message does not name the offending key"
    else:
        fail(f"`{case['toml']}` was accepted, but its type cannot hold that value, so the "
             "configuration must be refused")


@check("config.feature.default-off", title="without [features] memories = true the feature "
       "is off", rules="CFG-05", level="SHOULD", area="config", needs=NEEDS)
@pytest.mark.parametrize("features", ["", "memories = false"], ids=["absent", "false"])
def test_feature_default_off(impl: Adapter, home: CodexHome, features: str) -> None:
    setting = f"[features] {features}" if features else "no memories key in [features]"
    # without the key, the followed release's default (off in every release known so far)
    expected = releases.get(impl.handshake.follows[0]).feature_default and not features
    assert _resolve(impl, home, "", features=features)["feature_memories"] is expected, \
        f"with {setting} the feature is reported {'off' if expected else 'on'}"
    assert _resolve(impl, home, "", features="memories = true")["feature_memories"] is True, \
        "with [features] memories = true the feature is reported off"


# LAYOUT-03: the keys of releases with two layouts; a bad value is refused (Codex stops even
# without --strict-config)
LAYOUT_REJECTED = {
    "version-unknown": ('version = "v3"', "version"),
    "version-integer": ("version = 2", "version"),
    "version-upper-case": ('version = "V2"', "version"),
    "dual-write-string": ('dual_write = "yes"', "dual_write"),
}


@check("config.layout.rejected", title="a bad memories.version or dual_write is refused with a "
       "message naming the key", rules="LAYOUT-03", level="SHOULD", area="config", needs=NEEDS,
       codex_since="0.155.0")
@pytest.mark.parametrize("case", list(LAYOUT_REJECTED))
def test_layout_rejected(impl: Adapter, home: CodexHome, case: str) -> None:
    toml, key = LAYOUT_REJECTED[case]
    try:
        _resolve(impl, home, toml)
    except Rejected as refused:
        assert key in str(refused), "the refusal message does not name the offending key"
    else:
        fail(f"`{toml}` was accepted, but it is not a value the key can take, so the "
             "configuration must be refused")


@check("config.layout.version", title="memories.version names the layout in use",
       rules="LAYOUT-01", level="SHOULD", area="config", needs=NEEDS, codex_since="0.155.0")
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_layout_version(impl: Adapter, home: CodexHome, version: str) -> None:
    resolved = _resolve(impl, home, f'version = "{version}"')["memories"]
    assert resolved.get("version") == version, \
        f'with version = "{version}" the resolved configuration does not use layout {version}'

"""PROTO: the adapter handshake and a startup round trip (also the smoke checks)."""

from __future__ import annotations

from memconform import PROTOCOL_VERSION
from memconform.adapters import Adapter
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.protocol import capabilities
from memconform.registry import check


@check("protocol.start.handshake", title="start returns identity, protocol 1 and known "
       "capabilities", rules="PROTO-01", level="MUST", area="protocol", smoke=True)
def test_handshake(impl: Adapter) -> None:
    shake = impl.handshake
    assert shake.name.strip(), "implementation name is empty"
    assert shake.version.strip(), "implementation version is empty"
    assert shake.protocol_version == PROTOCOL_VERSION
    known = capabilities()
    missing = set(known["core"]) - shake.capabilities
    assert not missing, f"core capabilities not declared: {sorted(missing)}"
    unknown = shake.capabilities - set(known["core"]) - set(known["optional"])
    assert not unknown, f"capabilities outside the v1 vocabulary: {sorted(unknown)}"


@check("protocol.startup.round-trip", title="a startup on a prepared home answers and leaves "
       "config.toml untouched", rules="PROTO-02", level="MUST", area="protocol", smoke=True)
def test_startup_round_trip(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    before = (home.path / "config.toml").read_bytes()
    result = run_startup(home)
    assert "session_thread_id" in result
    assert (home.path / "config.toml").read_bytes() == before, "config.toml was rewritten"

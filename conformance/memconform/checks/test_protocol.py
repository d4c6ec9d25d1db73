"""PROTO: the adapter handshake and a startup round trip (also the smoke checks)."""

from __future__ import annotations

import uuid

from memconform import PROTOCOL_VERSION
from memconform.adapters import Adapter
from memconform.adapters.base import AdapterError, Rejected, Unsupported
from memconform.checks.stage1 import assert_now
from memconform.clock import HarnessClock
from memconform.codex import releases
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.protocol import capabilities
from memconform.registry import check, id_covers
from memconform.resources import local_checks
from memconform.scope import ALWAYS, in_scope, required_core
from memconform.verdicts import fail


@check("protocol.start.handshake", title="start returns identity, protocol 1 and known "
       "capabilities", rules="PROTO-01", level="MUST", area="protocol", smoke=True)
def test_handshake(impl: Adapter) -> None:
    shake = impl.handshake
    assert shake.name.strip(), "implementation name is empty"
    assert shake.version.strip(), "implementation version is empty"
    assert shake.protocol_version == PROTOCOL_VERSION, "the implementation chose another protocol"
    known = capabilities()
    areas: set[str] | None = None
    if shake.scope is not None:
        checks = local_checks()
        nameless = sorted(e for e in shake.scope
                          if not any(e == a or id_covers(e, c) for c, a in checks))
        assert not nameless, f"scope entries that name no local area or check id: {nameless}"
        areas = {a for c, a in checks if in_scope(c, a, shake.scope)} - {ALWAYS}
    missing = required_core(areas) - shake.capabilities
    assert not missing, f"core capabilities not declared: {sorted(missing)}"
    unknown = shake.capabilities - set(known["core"]) - set(known["optional"])
    assert not unknown, f"capabilities outside the v1 vocabulary: {sorted(unknown)}"
    version, layout = shake.follows
    try:
        release = releases.get(version)
    except releases.ReleaseError as exc:
        fail(f"follows: {exc}")
    assert layout in release.layouts, \
        f"follows layout {layout!r}, which Codex {version} does not have ({release.layouts})"


@check("protocol.startup.round-trip", title="a startup on a prepared home answers and leaves "
       "config.toml untouched", rules="PROTO-02", level="MUST", area="protocol", smoke=True)
def test_startup_round_trip(home: CodexHome, run_startup: StartupRunner) -> None:
    home.ensure_state_db()
    before = (home.path / "config.toml").read_bytes()
    result = run_startup(home)
    assert "session_thread_id" in result, "the startup result has no session_thread_id"
    assert (home.path / "config.toml").read_bytes() == before, "config.toml was rewritten"


UNKNOWN_OP = "memconform.no-such-operation"


@check("protocol.op.unknown", title="an operation the implementation does not know is "
       "answered unsupported, naming it, and the connection goes on", rules="PROTO-03",
       level="MUST", area="protocol")
def test_unknown_op(impl: Adapter, home: CodexHome, run_startup: StartupRunner) -> None:
    try:
        result = impl.call_unknown(UNKNOWN_OP, {"home": str(home.path)})
    except Unsupported as exc:
        # the harness puts the operation in front of the implementation's own message
        message = str(exc.msg).removeprefix(f"{UNKNOWN_OP}: ")
        assert UNKNOWN_OP in message, \
            "the `unsupported` answer to an unknown operation does not name the operation"
    except Rejected as exc:
        fail("an unknown operation was answered `rejected` instead of `unsupported`",
             expected="unsupported", actual=f"rejected: {exc}")
    except AdapterError as exc:
        fail("an unknown operation broke the implementation or was answered `internal`",
             expected="unsupported", actual=str(exc))
    else:
        fail("an unknown operation was answered ok", expected="unsupported", actual=result)
    # the connection goes on: the next request is served (an error here reports `error`)
    home.ensure_state_db()
    run_startup(home)


SESSION_SEEDS = range(1, 9)


@check("protocol.startup.session-id", title="a startup's session_thread_id is a UUIDv7 made "
       "at the startup, a new one for every seed", rules="PROTO-02", level="SHOULD",
       area="protocol")
def test_session_id(home: CodexHome, run_startup: StartupRunner,
                    clock: HarnessClock) -> None:
    """Eight startups on a home with no state database (nothing else runs), each with its
    own seed: a random bit written over the version or the variant shows up in one of them."""
    seen: list[str] = []
    for seed in SESSION_SEEDS:
        raw = run_startup(home, seed=seed).get("session_thread_id")
        if raw is None:
            fail(f"a startup of a root session (seed {seed}) answered no session_thread_id")
        try:
            tid = uuid.UUID(str(raw))
        except ValueError:
            fail("a startup's session_thread_id is not a UUID", actual=raw)
        assert tid.version == 7 and tid.variant == uuid.RFC_4122, \
            f"the session_thread_id {raw} (seed {seed}) is not an RFC 9562 UUIDv7 " \
            "(version 7, variant 10)"
        assert_now((tid.int >> 80) // 1000, clock, f"the time inside the session_thread_id {raw}")
        seen.append(str(raw))
    assert len(set(seen)) == len(seen), \
        "two startups with different seeds answered the same session_thread_id"

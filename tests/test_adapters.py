"""Transports and the Adapter: good and broken implementations over stdio and in-process."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from memconform.adapters import AdapterError, ImplSpecError, Rejected, Unsupported, resolve
from memconform.protocol import ProtocolViolation

STDIO_REF = f"exec:{sys.executable} -m memref.stdio"


def broken(name: str) -> str:
    return f"exec:{sys.executable} -m memconform.broken.{name}"


@pytest.mark.parametrize("spec", ["ref", "python:memref.adapter:factory", STDIO_REF])
def test_handshake_and_call_on_every_transport(spec: str) -> None:
    adapter = resolve(spec, timeout_s=30)
    try:
        assert adapter.handshake.name == "memref"
        assert "startup" in adapter.handshake.capabilities
        assert adapter.call("tokens.approx", {"text": "abcde"}) == {"tokens": 2}
    finally:
        adapter.close()


@pytest.mark.parametrize(("name", "kind"), [
    ("exits_at_start", "crash"), ("non_json", "bad-json"), ("wrong_seq", "wrong-seq"),
    ("bad_shape", "protocol"), ("hangs", "timeout")])
def test_broken_adapters_raise_adapter_errors(name: str, kind: str) -> None:
    # Only the hanging adapter gets the short deadline: the others import memref before they
    # answer, which on a loaded CI machine has taken longer than two seconds.
    adapter = resolve(broken(name), timeout_s=2 if kind == "timeout" else 12)
    started = time.monotonic()
    try:
        with pytest.raises(AdapterError) as caught:
            adapter.call("tokens.approx", {"text": "x"})
        assert caught.value.kind == kind
    finally:
        adapter.close()
    assert time.monotonic() - started < 15, "a broken adapter must not hang the harness"


def test_exit_at_start_keeps_stderr_for_the_report() -> None:
    adapter = resolve(broken("exits_at_start"), timeout_s=5)
    with pytest.raises(AdapterError) as caught:
        adapter.handshake  # noqa: B018
    adapter.close()
    assert "exiting at start" in caught.value.stderr
    assert "code 7" in str(caught.value)


def test_adapter_restarts_after_a_broken_exchange() -> None:
    adapter = resolve(STDIO_REF, timeout_s=30)
    try:
        adapter.handshake  # noqa: B018
        adapter.transport.close()  # the process is gone: the next call errors...
        with pytest.raises(AdapterError):
            adapter.call("tokens.approx", {"text": "x"})
        # ...and the one after runs on a fresh process
        assert adapter.call("tokens.approx", {"text": "abcd"}) == {"tokens": 1}
    finally:
        adapter.close()


def test_error_kinds_map_to_exceptions(tmp_path: Path) -> None:
    adapter = resolve("ref", timeout_s=30)
    home = tmp_path
    (home / "config.toml").write_text("[memories]\nuse_memories = 3\n")
    with pytest.raises(Rejected, match="use_memories"):
        adapter.call("config.resolve", {"home": str(home)})
    adapter.require("config.resolve")
    with pytest.raises(Unsupported):
        adapter.require("no.such.capability")


def test_requests_are_validated_before_sending() -> None:
    adapter = resolve("ref", timeout_s=30)
    with pytest.raises(ProtocolViolation, match="'txt' was unexpected"):
        adapter.call("tokens.approx", {"txt": "x"})


@pytest.mark.parametrize("spec", ["nope", "python:", "python:memref", "python:no_such_mod:f",
                                  "python:memref.adapter:missing", "exec:"])
def test_bad_impl_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(ImplSpecError):
        resolve(spec, timeout_s=1)


def test_codex_without_a_usable_binary_errors_at_the_handshake(tmp_path: Path) -> None:
    adapter = resolve(f"codex:{tmp_path / 'no-codex'}", timeout_s=5)
    with pytest.raises(AdapterError, match="not an executable file"):
        adapter.handshake  # noqa: B018
    adapter.close()


"""The harness side of the protocol: one `Adapter` per implementation, over any transport."""

from __future__ import annotations

import contextlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _pytest.outcomes import Skipped

from memconform import PROTOCOL_VERSION, __version__
from memconform.codex.releases import DEFAULT as DEFAULT_RELEASE
from memconform.protocol import ProtocolViolation, validate_request, validate_response


class AdapterError(Exception):
    """The implementation broke the protocol (crash, bad JSON, wrong seq, timeout, bad shape).

    A check that meets one reports `error`, never `pass` or `fail`.
    """

    def __init__(self, kind: str, message: str, stderr: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.stderr = stderr


class Unsupported(Skipped):
    """The implementation did not declare (or refused) a capability the check needs."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg=msg, pytrace=False)


class Rejected(Exception):
    """The implementation refused the input with a clear message (a legitimate outcome)."""


class Transport(ABC):
    label: str

    @abstractmethod
    def exchange(self, line: str, timeout_s: float) -> str:
        """Send one request line; return one response line or raise AdapterError."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def fresh(self) -> Transport:
        """A new connection to the same implementation, used after this one broke."""

    def stderr_tail(self) -> str:
        return ""

    def alive(self) -> bool:
        return True


@dataclass(frozen=True)
class Handshake:
    name: str
    version: str
    protocol_version: int
    capabilities: frozenset[str]
    raw: dict[str, Any]
    scope: frozenset[str] | None = None
    follows: tuple[str, str] = (DEFAULT_RELEASE, "v1")  # Codex release and memory layout


class Adapter:
    """Numbered, schema-validated requests; restarts the transport after it breaks."""

    def __init__(self, transport: Transport, *, spec: str, timeout_s: float, seed: int = 0):
        self.transport = transport
        self.spec = spec
        self.timeout_s = timeout_s
        self.seed = seed
        self._seq = 0
        self._handshake: Handshake | None = None
        self._broken = False
        self.transcript: list[dict[str, Any]] | None = None
        self.before_call: Callable[[str, dict[str, Any]], None] | None = None

    @property
    def handshake(self) -> Handshake:
        if self._handshake is None or self._broken:
            self._restart_if_broken()
            self._handshake = self._start()
        return self._handshake

    def supports(self, capability: str) -> bool:
        return capability in self.handshake.capabilities

    def require(self, capability: str) -> None:
        if not self.supports(capability):
            raise Unsupported(f"implementation does not declare capability {capability!r}")

    def _restart_if_broken(self) -> None:
        if self._broken:
            self.transport.close()
            self.transport = self.transport.fresh()
            self._broken = False

    def _start(self) -> Handshake:
        result = self._request("start", {
            "protocol_versions": [PROTOCOL_VERSION],
            "suite_version": __version__,
            "seed": self.seed,
        }, timeout_s=self.timeout_s)
        if result["protocol_version"] != PROTOCOL_VERSION:
            self._broken = True
            raise AdapterError("protocol", f"implementation chose protocol "
                                           f"{result['protocol_version']}, harness speaks 1")
        impl = result["implementation"]
        scope = result.get("scope")
        follows = result.get("follows") or {}
        return Handshake(name=impl["name"], version=impl["version"],
                         protocol_version=result["protocol_version"],
                         capabilities=frozenset(result["capabilities"]), raw=result,
                         scope=None if scope is None else frozenset(scope),
                         follows=(follows.get("codex", DEFAULT_RELEASE),
                                  follows.get("layout", "v1")))

    def call(self, op: str, args: dict[str, Any], *, timeout_s: float | None = None) -> Any:
        self.handshake  # noqa: B018 - starts (or restarts) the implementation
        if self.before_call is not None:
            self.before_call(op, args)
        return self._request(op, args, timeout_s=timeout_s or self.timeout_s)

    def call_unknown(self, op: str, args: dict[str, Any]) -> Any:
        """Send an operation outside protocol v1 (for the protocol checks): the envelope is
        validated, the arguments are not, and an `ok` answer's result is returned as it is."""
        self.handshake  # noqa: B018 - starts (or restarts) the implementation
        return self._request(op, args, timeout_s=self.timeout_s, known_op=False)

    def _request(self, op: str, args: dict[str, Any], *, timeout_s: float,
                 known_op: bool = True) -> Any:
        self._seq += 1
        message = {"seq": self._seq, "op": op, "args": args}
        validate_request(message, known_op=known_op)
        line = json.dumps(message)
        if self.transcript is not None:
            self.transcript.append({"request": message})
        try:
            reply_line = self.transport.exchange(line, timeout_s)
        except AdapterError as exc:
            self._broken = True
            if self.transcript is not None:
                self.transcript.append({"broken": str(exc)})
            raise
        if self.transcript is not None:
            self.transcript.append({"response": reply_line})
        try:
            reply = json.loads(reply_line)
        except json.JSONDecodeError as exc:
            self._broken = True
            raise AdapterError("bad-json", f"{op}: response is not JSON ({exc}): "
                                           f"{reply_line[:200]!r}",
                               self.transport.stderr_tail()) from exc
        if not isinstance(reply, dict) or reply.get("seq") != self._seq:
            self._broken = True
            got = reply.get("seq") if isinstance(reply, dict) else type(reply).__name__
            raise AdapterError("wrong-seq", f"{op}: expected seq {self._seq}, got {got!r}",
                               self.transport.stderr_tail())
        try:
            validate_response(op, reply, known_op=known_op)
        except ProtocolViolation as exc:
            raise AdapterError("protocol", str(exc), self.transport.stderr_tail()) from exc
        if reply["ok"]:
            return reply["result"]
        error = reply["error"]
        if error["kind"] == "unsupported":
            raise Unsupported(f"{op}: {error['message']}")
        if error["kind"] == "rejected":
            raise Rejected(error["message"])
        raise AdapterError("internal", f"{op}: {error['message']}", self.transport.stderr_tail())

    def close(self) -> None:
        if self._handshake is not None and not self._broken and self.transport.alive():
            with contextlib.suppress(AdapterError, Unsupported, Rejected):
                self._request("stop", {}, timeout_s=min(self.timeout_s, 10.0))
        self.transport.close()

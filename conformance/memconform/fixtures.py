"""The fixtures checks use: the implementation, the mock model, a Codex home, startups."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters import Adapter, ImplSpecError, Unsupported, resolve
from memconform.bundles import HomeState, capture_home
from memconform.clock import HarnessClock
from memconform.codex import releases
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, start_server
from memconform.registry import meta_of, stable_id
from memconform.scope import NotImplementedHere, gate, layout_gate, release_gate

StartupRunner = Callable[..., dict[str, Any]]
FACTS_KEY = pytest.StashKey[dict[str, Any]]()
ADAPTERS_KEY = pytest.StashKey[list[Adapter]]()
BEFORE_KEY = pytest.StashKey[HomeState]()
STARTUP_GRACE_S = 30.0
# the budget a startup request gives the implementation (`timeout_s`), from --startup-timeout;
# the harness waits that long plus STARTUP_GRACE_S for the answer
startup_timeout_s = 60.0


def _is_local(config: pytest.Config) -> bool:
    return bool(config.getoption("--profile") == "local")


def _adapter_scope(fixture_name: str, config: pytest.Config) -> str:
    """One adapter per test process; one per check with --adapter-per-check (mutation runs,
    where what starting the implementation does must count for every check that needs it)."""
    return "function" if config.getoption("--adapter-per-check") else "session"


def impl_spec(request: pytest.FixtureRequest) -> str:
    """The implementation a check runs against: --impl, or the one --also-impl's parameter
    names (the check's `impl` parameter; a session-wide adapter has none)."""
    callspec = getattr(request.node, "callspec", None)
    param = None if callspec is None else callspec.params.get("impl")
    spec: str = param if isinstance(param, str) else request.config.getoption("--impl")
    return spec


@pytest.fixture(scope=_adapter_scope)  # type: ignore[arg-type]
def impl(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> Iterator[Adapter]:
    """The implementation under test, started once per test process (or per check)."""
    try:
        adapter = resolve(impl_spec(request),
                          timeout_s=pytestconfig.getoption("--adapter-timeout"))
    except ImplSpecError as exc:
        raise pytest.UsageError(str(exc)) from exc
    adapter.seed = pytestconfig.getoption("--impl-seed")
    yield adapter
    adapter.close()


def _validates(version: str) -> bool:
    """Whether the release's consolidation agent must leave valid artifacts (P2-RUN-08)."""
    try:
        return releases.get(version).validates_agent_artifacts
    except releases.ReleaseError:
        return False  # protocol.start.handshake reports the unknown release


@pytest.fixture(autouse=True)
def _memconform_gate(request: pytest.FixtureRequest) -> Iterator[None]:
    """Before anything is built: is the check in the implementation's scope, are its
    capabilities declared; then record the protocol exchanges of the check."""
    meta = meta_of(request.node)
    if meta is None or not _is_local(request.config):
        yield
        return
    adapter: Adapter = request.getfixturevalue("impl")
    needs = list(meta.needs)
    if "run_startup" in request.fixturenames and "startup" not in needs:
        needs.insert(0, "startup")
    shake = adapter.handshake
    reason = gate(stable_id(request.node, meta), meta.area, needs, shake.scope,
                  shake.capabilities) or release_gate(meta.codex_since, shake.follows) \
        or layout_gate(meta.layout, shake.follows)
    if reason is not None:
        raise NotImplementedHere(reason)
    if "model" in request.fixturenames and "home" in request.fixturenames:
        model: MockModel = request.getfixturevalue("model")
        home: CodexHome = request.getfixturevalue("home")
        model.agent_artifacts = home.memory_root if _validates(shake.follows[0]) else None
        model.artifacts_layout = home.layout
    for capability in meta.needs:
        if capability == "clock.inject" and request.config.getoption("--no-clock-inject"):
            raise Unsupported("clock.inject: not used in this run (--no-clock-inject)")
        adapter.require(capability)
    adapter.transcript = []
    adapter.before_call = _home_snapshot(request.node)
    request.node.stash[ADAPTERS_KEY] = [adapter]
    yield
    adapter.transcript = None
    adapter.before_call = None


def _home_snapshot(item: pytest.Item) -> Callable[[str, dict[str, Any]], None]:
    """Describe the Codex home as the harness prepared it, at the check's first request
    that names it (for the bundle of a check that fails)."""

    def before(op: str, args: dict[str, Any]) -> None:
        if BEFORE_KEY not in item.stash and isinstance(args.get("home"), str):
            item.stash[BEFORE_KEY] = capture_home(Path(args["home"]))

    return before


@pytest.fixture
def facts(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Measurements a check reports (case counts, sizes); they land in its report record."""
    found: dict[str, Any] = {}
    request.node.stash[FACTS_KEY] = found
    return found


@pytest.fixture
def clock(impl: Adapter, request: pytest.FixtureRequest) -> HarnessClock:
    return HarnessClock(injected=impl.supports("clock.inject")
                        and not request.config.getoption("--no-clock-inject"))


@pytest.fixture(scope="session")
def _model_server() -> Iterator[Any]:
    server = start_server()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def model(_model_server: Any) -> Iterator[MockModel]:
    """The mock Responses API, with an empty script and log for this check."""
    _model_server.clear()
    mock = MockModel(_model_server)
    yield mock
    mock.reset()


@pytest.fixture
def home(tmp_path: Path, clock: HarnessClock, model: MockModel, impl: Adapter,
         pytestconfig: pytest.Config) -> CodexHome:
    """An empty Codex home whose config points at the mock model, its memories where the
    implementation's layout keeps them."""
    built = CodexHome(tmp_path / "codex-home", now_ms=clock.now_ms,
                      model_base_url=model.base_url, seed=pytestconfig.getoption("--impl-seed"),
                      layout=impl.handshake.follows[1])
    built.write_config()
    return built


def startup_args(target: CodexHome, clock: HarnessClock, *, seed: int, source: str = "cli",
                 ephemeral: bool = False, subagent: bool = False,
                 resume_thread_id: str | None = None, timeout_s: float | None = None
                 ) -> dict[str, Any]:
    """The `startup` request for one session on `target`."""
    return {"home": str(target.path), "now_ms": clock.request_now(), "seed": seed,
            "session": {"source": source, "ephemeral": ephemeral, "subagent": subagent,
                        "resume_thread_id": resume_thread_id},
            "env": target.env, "timeout_s": timeout_s or startup_timeout_s}


@pytest.fixture
def run_startup(impl: Adapter, clock: HarnessClock, pytestconfig: pytest.Config
                ) -> StartupRunner:
    """Run one startup of the implementation on a home: `run_startup(home, ephemeral=True)`."""

    def run(target: CodexHome, *, seed: int | None = None, **session: Any) -> dict[str, Any]:
        """`seed` replaces the run's --impl-seed for this startup only."""
        args = startup_args(target, clock, seed=pytestconfig.getoption("--impl-seed")
                            if seed is None else seed, **session)
        result: dict[str, Any] = impl.call("startup", args,
                                           timeout_s=args["timeout_s"] + STARTUP_GRACE_S)
        return result

    return run


@pytest.fixture
def impl_pool(request: pytest.FixtureRequest, pytestconfig: pytest.Config
              ) -> Iterator[Callable[[int], list[Adapter]]]:
    """Extra, independent connections to the implementation (separate processes for exec:),
    for checks that race several sessions on one home."""
    made: list[Adapter] = []

    def make(count: int) -> list[Adapter]:
        fresh = [resolve(impl_spec(request),
                         timeout_s=pytestconfig.getoption("--adapter-timeout"))
                 for _ in range(count)]
        for adapter in fresh:
            adapter.transcript = []
        made.extend(fresh)
        request.node.stash.setdefault(ADAPTERS_KEY, []).extend(fresh)
        return fresh

    yield make
    for adapter in made:
        adapter.close()

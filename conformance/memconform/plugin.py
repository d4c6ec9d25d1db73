"""The memconform pytest plugin: options, fixtures, check metadata, statuses and reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.outcomes import Failed

from memconform import resources
from memconform.adapters import Adapter, AdapterError, ImplSpecError, Rejected, Unsupported, resolve
from memconform.clock import HarnessClock
from memconform.cloud.client import Cloud
from memconform.cloud.service import CloudSpecError, db_label
from memconform.cloud.service import Service as CloudService
from memconform.cloud.service import start as start_cloud
from memconform.cloud.service import validate as validate_cloud
from memconform.expectations import Expectation, Expectations, ExpectationsError
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, start_server
from memconform.registry import AREAS, MARKER, CheckMeta, id_covers, meta_of, stable_id
from memconform.report import Reporter

CHECKS_PACKAGE = "memconform.checks"
PROFILES = {"local": CHECKS_PACKAGE, "cloud": "memconform.cloud_checks"}
ID_KEY = pytest.StashKey[str]()
EXPECT_KEY = pytest.StashKey[Expectation | None]()
FACTS_KEY = pytest.StashKey[dict[str, Any]]()
_EXPECTATIONS = pytest.StashKey[Expectations]()
PROP = "memconform:"
MESSAGE_LIMIT = 4000
StartupRunner = Callable[..., dict[str, Any]]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memconform", "memconform conformance checks")
    group.addoption("--impl", default="ref",
                    help="implementation: ref, python:MODULE:FACTORY, exec:COMMAND")
    group.addoption("--expectations", type=Path, default=None,
                    help="TOML file of checks this implementation is known to fail")
    group.addoption("--strict-expectations", action="store_true",
                    help="stale expectation entries fail the run")
    group.addoption("--report-dir", type=Path, default=None,
                    help="write report.jsonl, junit.xml and summary.md here")
    group.addoption("--area", action="append", default=[], choices=sorted(AREAS),
                    help="run only checks of this area (repeatable)")
    group.addoption("--smoke-checks", action="store_true", help="run only the smoke checks")
    group.addoption("--check-id", dest="check_ids", action="append", default=[],
                    help="run only this check id, or every case of it (repeatable)")
    group.addoption("--adapter-timeout", type=float, default=120.0,
                    help="seconds to wait for any one protocol response")
    group.addoption("--impl-seed", type=int, default=0, help="seed sent to the implementation")
    group.addoption("--profile", default="local", choices=sorted(PROFILES),
                    help="local: a Codex-style pipeline over the adapter protocol; cloud: a "
                         "control-plane service over HTTP")
    group.addoption("--cloud-db", default="sqlite",
                    help="cloud profile, bundled service: sqlite, postgresql or a SQLAlchemy URL")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(meta): memconform check metadata")
    if config.getoption("--snapshot-update", default=False) and (
            _is_worker(config) or config.getoption("numprocesses", default=None)):
        raise pytest.UsageError("--snapshot-update cannot run under xdist (-n); "
                                "update snapshots in a serial run")
    _codex_homes_outside_tmp(config)
    if config.getoption("--profile") == "cloud":
        try:
            validate_cloud(config.getoption("--impl"), config.getoption("--cloud-db"))
        except CloudSpecError as exc:
            raise pytest.UsageError(str(exc)) from exc
    path = config.getoption("--expectations")
    try:
        expectations = Expectations.load(path) if path else Expectations.empty()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from exc
    config.stash[_EXPECTATIONS] = expectations
    report_dir = config.getoption("--report-dir")
    if report_dir is not None and not _is_worker(config):
        if not config.option.xmlpath:
            config.option.xmlpath = str(report_dir / "junit.xml")
        reporter = Reporter(report_dir, {
            "impl": config.getoption("--impl"), "expectations": str(path) if path else None,
            "profile": config.getoption("--profile"),
            "areas": config.getoption("--area"), "check_ids": config.getoption("check_ids"),
            "keyword": config.getoption("keyword") or None,
            "smoke": config.getoption("--smoke-checks"), "seed": config.getoption("--impl-seed"),
            "adapter_timeout_s": config.getoption("--adapter-timeout"),
            "workers": config.getoption("numprocesses", default=None)})
        config.pluginmanager.register(_ReportPlugin(config, reporter, expectations),
                                      "memconform-report")


def _codex_homes_outside_tmp(config: pytest.Config) -> None:
    """The Codex binary refuses to set up its helpers under /tmp, where pytest keeps homes
    by default: for `--impl codex` they go to the user's cache unless --basetemp is given."""
    if not str(config.getoption("--impl")).startswith("codex") or _is_worker(config):
        return
    if config.option.basetemp is None:
        from memconform.codex.binary import work_dir
        config.option.basetemp = str(work_dir() / "pytest")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    expectations = config.stash[_EXPECTATIONS]
    areas = set(config.getoption("--area"))
    smoke = config.getoption("--smoke-checks")
    wanted = config.getoption("check_ids")
    seen: dict[str, str] = {}
    keep, drop = [], []
    for item in items:
        meta = meta_of(item)
        module = getattr(getattr(item, "module", None), "__name__", "")
        if meta is None:
            if module.startswith(tuple(PROFILES.values())):
                raise pytest.UsageError(f"{item.nodeid}: a check without @check metadata")
            keep.append(item)
            continue
        check_id = stable_id(item, meta)
        if check_id in seen:
            raise pytest.UsageError(f"duplicate check id {check_id}: {seen[check_id]} and "
                                    f"{item.nodeid}")
        seen[check_id] = item.nodeid
        item.stash[ID_KEY] = check_id
        expectation = expectations.lookup(check_id)
        item.stash[EXPECT_KEY] = expectation
        if expectation is not None and expectation.status == "skip":
            item.add_marker(pytest.mark.skip(reason=f"expectations: {expectation.reason}"))
        if ((areas and meta.area not in areas) or (smoke and not meta.smoke)
                or (wanted and not any(id_covers(w, check_id) for w in wanted))):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def impl(pytestconfig: pytest.Config) -> Iterator[Adapter]:
    """The implementation under test, started once per test process."""
    try:
        adapter = resolve(pytestconfig.getoption("--impl"),
                          timeout_s=pytestconfig.getoption("--adapter-timeout"))
    except ImplSpecError as exc:
        raise pytest.UsageError(str(exc)) from exc
    adapter.seed = pytestconfig.getoption("--impl-seed")
    yield adapter
    adapter.close()


@pytest.fixture(autouse=True)
def _memconform_needs(request: pytest.FixtureRequest) -> None:
    meta = meta_of(request.node)
    if meta is not None and meta.needs:
        adapter: Adapter = request.getfixturevalue("impl")
        for capability in meta.needs:
            adapter.require(capability)


@pytest.fixture(scope="session")
def cloud_service(pytestconfig: pytest.Config) -> Iterator[CloudService]:
    """The cloud service under test, started once per test process."""
    try:
        service = start_cloud(pytestconfig.getoption("--impl"),
                              pytestconfig.getoption("--cloud-db"))
    except CloudSpecError as exc:
        raise pytest.UsageError(str(exc)) from exc
    yield service
    service.stop()


@pytest.fixture
def cloud(cloud_service: CloudService) -> Iterator[Cloud]:
    """A client of the cloud service, emptied for this check."""
    cloud_service.check_alive()
    client = Cloud(cloud_service.base_url, cloud_service.token)
    client.reset()
    yield client
    client.close()


@pytest.fixture
def facts(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Measurements a check reports (case counts, sizes); they land in its report record."""
    found: dict[str, Any] = {}
    request.node.stash[FACTS_KEY] = found
    return found


@pytest.fixture
def clock(impl: Adapter) -> HarnessClock:
    return HarnessClock(injected=impl.supports("clock.inject"))


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
def home(tmp_path: Path, clock: HarnessClock, model: MockModel,
         pytestconfig: pytest.Config) -> CodexHome:
    """An empty Codex home whose config points at the mock model."""
    built = CodexHome(tmp_path / "codex-home", now_ms=clock.now_ms,
                      model_base_url=model.base_url, seed=pytestconfig.getoption("--impl-seed"))
    built.write_config()
    return built


def startup_args(target: CodexHome, clock: HarnessClock, *, seed: int, source: str = "cli",
                 ephemeral: bool = False, subagent: bool = False,
                 resume_thread_id: str | None = None, timeout_s: float = 60.0
                 ) -> dict[str, Any]:
    """The `startup` request for one session on `target`."""
    return {"home": str(target.path), "now_ms": clock.request_now(), "seed": seed,
            "session": {"source": source, "ephemeral": ephemeral, "subagent": subagent,
                        "resume_thread_id": resume_thread_id},
            "env": target.env, "timeout_s": timeout_s}


@pytest.fixture
def run_startup(impl: Adapter, clock: HarnessClock, pytestconfig: pytest.Config
                ) -> StartupRunner:
    """Run one startup of the implementation on a home: `run_startup(home, ephemeral=True)`."""

    def run(target: CodexHome, **session: Any) -> dict[str, Any]:
        args = startup_args(target, clock, seed=pytestconfig.getoption("--impl-seed"), **session)
        result: dict[str, Any] = impl.call("startup", args, timeout_s=args["timeout_s"] + 30)
        return result

    return run


@pytest.fixture
def impl_pool(pytestconfig: pytest.Config) -> Iterator[Callable[[int], list[Adapter]]]:
    """Extra, independent connections to the implementation (separate processes for exec:),
    for checks that race several sessions on one home."""
    made: list[Adapter] = []

    def make(count: int) -> list[Adapter]:
        fresh = [resolve(pytestconfig.getoption("--impl"),
                         timeout_s=pytestconfig.getoption("--adapter-timeout"))
                 for _ in range(count)]
        made.extend(fresh)
        return fresh

    yield make
    for adapter in made:
        adapter.close()


# -- statuses -------------------------------------------------------------------------------


def _classify(report: pytest.TestReport, call: pytest.CallInfo[None], meta: CheckMeta
              ) -> tuple[str, str]:
    exc = call.excinfo.value if call.excinfo is not None else None
    text = report.longreprtext[:MESSAGE_LIMIT] if report.longrepr else ""
    if report.passed:
        return "pass", ""
    if report.skipped:
        if isinstance(exc, Unsupported):
            if meta.level == "MUST":
                return "fail", f"MUST-level check cannot be unsupported: {exc.msg!s}"
            return "unsupported", str(exc.msg)
        return "skip", str(getattr(exc, "msg", text))
    if isinstance(exc, AdapterError):
        tail = f"\n--- implementation stderr ---\n{exc.stderr[-1500:]}" if exc.stderr else ""
        return "error", f"adapter {exc}{tail}"
    if isinstance(exc, Failed) and str(exc).startswith("Timeout"):
        return "error", f"timeout: {exc}"
    if report.when != "call":
        return "error", text
    if isinstance(exc, AssertionError | Rejected | Failed):
        return "fail", text
    return "error", text


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    meta = meta_of(item)
    if meta is None or ID_KEY not in item.stash:
        return
    status, message = _classify(report, call, meta)
    expectation = item.stash.get(EXPECT_KEY, None)
    expected = expectation.status if expectation is not None else None
    if report.when == "call" and expected == "fail":
        if status == "fail":
            status = "xfail"
            report.outcome = "skipped"
            report.wasxfail = f"expectations: {expectation.reason}"  # type: ignore[union-attr]
        elif status == "pass":
            status = "xpass"
            report.outcome = "failed"
            message = f"expected to fail ({expectation.reason}) but passed"  # type: ignore[union-attr]
            report.longrepr = f"[XPASS] {item.stash[ID_KEY]}: {message}"
    if status == "fail" and report.outcome == "skipped":
        report.outcome = "failed"
        report.longrepr = message
    report.user_properties.append((PROP + report.when, json.dumps({
        "id": item.stash[ID_KEY], "area": meta.area, "level": meta.level,
        "rules": list(meta.rules), "title": meta.title, "status": status,
        "message": message, "expected": expected,
        "facts": item.stash.get(FACTS_KEY, {})})))


class _ReportPlugin:
    """Lives on the controller: turns per-phase reports into one record per check."""

    def __init__(self, config: pytest.Config, reporter: Reporter,
                 expectations: Expectations) -> None:
        self.config = config
        self.reporter = reporter
        self.expectations = expectations
        self.phases: dict[str, dict[str, Any]] = {}

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.getoption("collectonly"):
            return
        if self.config.getoption("--profile") == "cloud":
            self.reporter.implementation.update(
                profile="cloud", db=db_label(self.config.getoption("--cloud-db")))
            return
        try:
            adapter = resolve(self.config.getoption("--impl"),
                              timeout_s=self.config.getoption("--adapter-timeout"))
            handshake = adapter.handshake
            adapter.close()
        except ImplSpecError as exc:
            raise pytest.UsageError(str(exc)) from exc
        except (AdapterError, Unsupported, Rejected) as exc:
            # Every check will meet the same failure and report `error`.
            self.reporter.implementation["handshake_error"] = str(exc)
            return
        self.reporter.implementation.update(
            name=handshake.name, version=handshake.version,
            protocol_version=handshake.protocol_version,
            capabilities=sorted(handshake.capabilities),
            details=handshake.raw["implementation"])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = dict(report.user_properties).get(PROP + report.when)
        if data is None:
            return
        phase = json.loads(str(data))
        phase["duration"] = report.duration
        entry = self.phases.setdefault(report.nodeid, {})
        entry[report.when] = phase
        if report.when == "teardown":
            self.reporter.add(_record(report.nodeid, entry))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
        self.reporter.stale = self.expectations.stale([c["id"] for c in manifest["checks"]])
        self.reporter.write()


def _record(nodeid: str, phases: dict[str, Any]) -> dict[str, Any]:
    setup, call, teardown = phases["setup"], phases.get("call"), phases.get("teardown")
    final: dict[str, Any] = call if call is not None and setup["status"] == "pass" else setup
    if teardown and teardown["status"] == "error" and final["status"] in ("pass", "xfail"):
        final = {**final, "status": "error", "message": teardown["message"]}
    record = {key: final[key] for key in ("id", "area", "level", "rules", "title", "status",
                                          "message", "expected")}
    if final.get("facts"):
        record["facts"] = final["facts"]
    record["nodeid"] = nodeid
    record["duration_s"] = round(sum(p["duration"] for p in phases.values()), 4)
    record["type"] = "check"
    return record

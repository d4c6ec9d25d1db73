"""The memconform pytest plugin: options, selection, statuses, and the records of a run.

Where a check runs (the only process, or an xdist worker) each phase is classified into a
status with its account (`outcomes.py`) and a failing check's bundle is written; on the
controller the phases become one record per check, progress lines and the report files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from memconform import basetemp, bundles, capture, fixtures, resources, shard
from memconform.adapters import Adapter, AdapterError, ImplSpecError, Rejected, Unsupported, resolve
from memconform.cloud.service import CloudSpecError, db_label
from memconform.cloud.service import validate as validate_cloud
from memconform.expectations import Expectation, Expectations, ExpectationsError
from memconform.fixtures import ADAPTERS_KEY, BEFORE_KEY, FACTS_KEY
from memconform.outcomes import Comparison, Outcome, classify
from memconform.progress import LiveProgress
from memconform.registry import MARKER, meta_of, stable_id
from memconform.rendering import Normalizer, normalizer_for
from memconform.report import Reporter
from memconform.selection import PROFILES, add_options, pattern, selected, unknown_ids

ID_KEY = pytest.StashKey[str]()
EXPECT_KEY = pytest.StashKey[Expectation | None]()
PHASES_KEY = pytest.StashKey[list[str]]()
_EXPECTATIONS = pytest.StashKey[Expectations]()
_REMOVE_AT_END = pytest.StashKey[Path]()
PROP = "memconform:"
FAILING = ("fail", "error", "xpass")
LETTERS = {"pass": ".", "fail": "F", "error": "E", "xfail": "x", "xpass": "X",
           "unsupported": "u", "not-implemented": "n", "skip": "s"}
_comparisons: list[Comparison] = []



def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With --also-impl, each check that uses the implementation runs against --impl
    (`impl-0`) and against each extra one (`impl-1`, ...): a mutation run then reaches the
    reference's code that only another release or layout runs. Snapshot checks keep their
    names (the stored snapshots are named after them) and run against --impl only."""
    extra = metafunc.config.getoption("--also-impl")
    if not extra or "impl" not in metafunc.fixturenames or "snapshot" in metafunc.fixturenames:
        return
    specs = [metafunc.config.getoption("--impl"), *extra]
    metafunc.parametrize("impl", specs, indirect=True,
                         ids=[f"impl-{n}" for n in range(len(specs))])


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(meta): memconform check metadata")
    if config.getoption("--snapshot-update", default=False) and (
            _is_worker(config) or config.getoption("numprocesses", default=None)):
        raise pytest.UsageError("--snapshot-update cannot run under xdist (-n); "
                                "update snapshots in a serial run")
    if config.getoption("--also-impl") and not config.getoption("--adapter-per-check"):
        raise pytest.UsageError("--also-impl needs --adapter-per-check (one implementation "
                                "per check)")
    config.pluginmanager.import_plugin("memconform.fixtures")
    fixtures.startup_timeout_s = config.getoption("--startup-timeout")
    _place_homes(config)
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
        reporter = Reporter(report_dir, {
            "impl": config.getoption("--impl"), "expectations": str(path) if path else None,
            "profile": config.getoption("--profile"),
            "areas": config.getoption("--area"), "check_ids": config.getoption("check_ids"),
            "match": config.getoption("match"), "keyword": config.getoption("keyword") or None,
            "smoke": config.getoption("--smoke-checks"), "seed": config.getoption("--impl-seed"),
            "adapter_timeout_s": config.getoption("--adapter-timeout"),
            "startup_timeout_s": config.getoption("--startup-timeout"),
            "workers": config.getoption("numprocesses", default=None),
            "shard": config.getoption("--shard"),
            "shard_durations": _text(config.getoption("--shard-durations"))})
        try:
            reporter.prepare()
        except OSError as exc:
            raise pytest.UsageError(f"--report-dir {report_dir}: cannot write reports there "
                                    f"({exc.strerror or exc})") from exc
        config.pluginmanager.register(_Recorder(config, reporter, expectations),
                                      "memconform-report")


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _place_homes(config: pytest.Config) -> None:
    """This run's base temporary folder (see basetemp.py), unless --basetemp is given."""
    if _is_worker(config) or config.option.basetemp is not None:
        return
    chosen = basetemp.choose(str(config.getoption("--impl")), "TMPDIR" in os.environ)
    if chosen is not None:
        folder, remove_at_end = chosen
        config.option.basetemp = str(folder)
        if remove_at_end:
            config.stash[_REMOVE_AT_END] = folder


def pytest_sessionstart(session: pytest.Session) -> None:
    """The reference's memoized functions start empty in every session: what an earlier
    session in the same process remembered must not answer for the code as it is now (mutmut
    runs a mutant's checks in a fork of the process that ran them on the unmutated code, so a
    remembered summary stem hid every mutant of the stem's code)."""
    for name, module in list(sys.modules.items()):
        if name == "memref" or name.startswith("memref."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_REMOVE_AT_END, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    expectations = config.stash[_EXPECTATIONS]
    areas = set(config.getoption("--area"))
    smoke = config.getoption("--smoke-checks")
    wanted = config.getoption("check_ids")
    matches = [pattern(m) for m in config.getoption("match")]
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
        expectation = expectations.lookup(check_id, meta.area)
        item.stash[EXPECT_KEY] = expectation
        if expectation is not None and expectation.status == "skip":
            item.add_marker(pytest.mark.skip(reason=f"expectations: {expectation.reason}"))
        if selected(check_id, meta.area, meta.smoke, areas=areas, smoke_only=smoke,
                    wanted=wanted, matches=matches):
            keep.append(item)
        else:
            drop.append(item)
    if wanted and seen and not _is_worker(config):
        problems = unknown_ids(wanted, seen)
        if problems:
            raise pytest.UsageError("; ".join(problems))
    keep, drop = _in_shard(config, keep, drop)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _in_shard(config: pytest.Config, keep: list[pytest.Item], drop: list[pytest.Item]
              ) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """With --shard K/N: of the selected checks, those of shard K."""
    spec = config.getoption("--shard")
    if spec is None:
        return keep, drop
    try:
        part = shard.parse(spec)
        path = config.getoption("--shard-durations")
        known = shard.durations(path) if path is not None else {}
    except shard.ShardError as exc:
        raise pytest.UsageError(str(exc)) from exc
    placed = shard.assign([i.stash[ID_KEY] for i in keep if ID_KEY in i.stash], part.count,
                          known)
    mine = [i for i in keep if ID_KEY not in i.stash or placed[i.stash[ID_KEY]] == part.index]
    chosen = set(mine)
    return mine, drop + [i for i in keep if i not in chosen]


# -- where a check runs -----------------------------------------------------------------------


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> None:
    """Remember the comparison of a failing `assert`: its record shows expected and actual
    (against a syrupy snapshot: both as the snapshot serializes them)."""
    if type(right).__name__ == "SnapshotAssertion":
        try:
            last = right.executions[max(right.executions)]
            left, right = last.asserted_data, last.recalled_data
        except (AttributeError, KeyError, TypeError, ValueError):
            pass
    _comparisons.append(Comparison(op, left, right))
    del _comparisons[:-1]


def _expected(result: Outcome, expectation: Expectation | None, check_id: str) -> None:
    """Apply the expectations file: a known failure is xfail; a strict entry that passes is
    xpass; a group entry ("these may fail") lets a pass stand."""
    if expectation is None or expectation.status != "fail":
        return
    if result.status == "fail":
        result.status = "xfail"
    elif result.status == "pass" and expectation.strict_for(check_id):
        result.status = "xpass"
        result.sentence = f"expected to fail ({expectation.reason}) but passed"


def _tally(item: pytest.Item, when: str, status: str) -> tuple[str, str | None]:
    """The category this phase counts under ('' for none) and the one it replaces."""
    seen = item.stash.setdefault(PHASES_KEY, [])
    seen.append(status)
    if when == "setup":
        return ("" if status == "pass" else status), None
    if when == "call":
        return status, None
    counted = seen[-2] if len(seen) > 1 else "pass"
    if status in ("fail", "error") and counted in ("pass", "xfail"):
        return "error", counted
    return "", None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    meta = meta_of(item)
    if meta is None or ID_KEY not in item.stash:
        return report
    comparison = _comparisons.pop() if _comparisons else None
    normalize = normalizer_for(item)
    full = bool(item.config.getoption("--mc-traceback"))
    result = classify(report.when, call.excinfo, meta.level, comparison, normalize,
                      full_traceback=full)
    check_id = item.stash[ID_KEY]
    expectation = item.stash.get(EXPECT_KEY, None)
    if report.when == "call" or (report.when == "setup" and result.status != "pass"):
        _expected(result, expectation, check_id)
    _to_pytest(report, result, expectation, check_id, full)
    tally, replaces = _tally(item, report.when, result.status)
    phase: dict[str, Any] = {
        "id": check_id, "area": meta.area, "level": meta.level, "rules": list(meta.rules),
        "title": meta.title, **result.fields(), "message": result.message(),
        "test": _test_name(item), "tally": tally, "replaces": replaces,
        "facts": item.stash.get(FACTS_KEY, {})}
    if expectation is not None:
        phase["expectation"] = {"key": expectation.key, "status": expectation.status,
                                "reason": expectation.reason}
    final = report.when == "call" or (report.when == "setup" and result.status != "pass")
    if final:
        phase["bundle"] = _bundle(item, phase, normalize)
        _capture(item, check_id, result.status, normalize)
    report.user_properties.append((PROP + report.when, json.dumps(phase)))
    return report


def _to_pytest(report: pytest.TestReport, result: Outcome, expectation: Expectation | None,
               check_id: str, full: bool) -> None:
    """Make pytest's own outcome agree with the status (its exit code and summary follow)."""
    if result.status == "pass":
        report.outcome = "passed"
    elif result.status == "xfail":
        report.outcome = "skipped"
        report.wasxfail = f"expectations: {expectation.reason if expectation else ''}"
    elif result.status in FAILING:
        report.outcome = "failed"
        if not full or report.longrepr is None:
            report.longrepr = f"{check_id}: {result.message()}"
    elif report.outcome != "skipped":
        report.outcome = "skipped"
        report.longrepr = ("", -1, result.sentence)


def _test_name(item: pytest.Item) -> str:
    """The check's pytest function, named by module (independent of the install path)."""
    module = getattr(getattr(item, "module", None), "__name__", "")
    return f"{module}::{item.name}" if module else item.name


def _capture(item: pytest.Item, check_id: str, status: str, normalize: Normalizer) -> None:
    out = item.config.getoption("--capture-state")
    if out is None:
        return
    adapters: list[Adapter] = item.stash.get(ADAPTERS_KEY, [])
    transcript = [entry for adapter in adapters for entry in (adapter.transcript or [])]
    funcargs = getattr(item, "funcargs", {})
    home = getattr(funcargs.get("home"), "path", None)
    clock = funcargs.get("clock")
    snapshot = capture.state(home, funcargs.get("model"), transcript,
                             now_ms=clock.now_ms if clock is not None else None)
    capture.write(out, check_id, status, snapshot, normalize)


def _bundle(item: pytest.Item, phase: dict[str, Any], normalize: Normalizer) -> str | None:
    config = item.config
    keep = config.getoption("--keep")
    report_dir = config.getoption("--report-dir")
    if phase["status"] in FAILING and report_dir is not None:
        out = report_dir / "bundles"
    elif keep is not None:
        out = keep
    else:
        return None
    adapters: list[Adapter] = item.stash.get(ADAPTERS_KEY, [])
    transcript = [entry for adapter in adapters for entry in (adapter.transcript or [])]
    funcargs = getattr(item, "funcargs", {})
    home = funcargs.get("home")
    before = item.stash.get(BEFORE_KEY, None)
    target = bundles.write(out, phase, transcript=transcript, model=funcargs.get("model"),
                           home=getattr(home, "path", None),
                           before=None if before is None else before.render(normalize),
                           normalize=normalize)
    if report_dir is not None and target.is_relative_to(report_dir):
        return target.relative_to(report_dir).as_posix()
    return normalize(str(target))


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    data = _phase(report)
    if data is None:
        return None
    category = data["tally"]
    if not category:
        return "", "", ""
    if config.getoption("--progress") in ("lines", "live"):
        return category, "", ""
    return category, LETTERS[category], category.upper()


def _phase(report: pytest.TestReport) -> dict[str, Any] | None:
    raw = dict(getattr(report, "user_properties", ())).get(PROP + str(report.when))
    return None if raw is None else dict(json.loads(str(raw)))


# -- on the controller -------------------------------------------------------------------------


def repro(config: pytest.Config, check_id: str) -> str:
    """The command that runs this one check again, the same way."""
    parts = ["memconform", "run", "--impl", config.getoption("--impl")]
    if config.getoption("--profile") != "local":
        parts += ["--profile", config.getoption("--profile")]
        if config.getoption("--cloud-db") != "sqlite":
            parts += ["--cloud-db", config.getoption("--cloud-db")]
    if config.getoption("--impl-seed"):
        parts += ["--impl-seed", str(config.getoption("--impl-seed"))]
    return shlex.join([*parts, "--id", check_id])


class _Recorder:
    """Turns per-phase reports into one record per check, prints progress, writes reports."""

    def __init__(self, config: pytest.Config, reporter: Reporter,
                 expectations: Expectations) -> None:
        self.config = config
        self.reporter = reporter
        self.expectations = expectations
        self.phases: dict[str, dict[str, Any]] = {}
        self.total = 0
        self.live: LiveProgress | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.getoption("collectonly"):
            return
        self._on_signals(session)
        try:
            self._identify()
        finally:
            self.reporter.start()

    def _on_signals(self, session: pytest.Session) -> None:
        """SIGINT and SIGTERM (Ctrl-C, a CI cancel) stop the run with its footer written.

        Where checks run in this process, the first signal lets the running check finish and
        starts no other (a KeyboardInterrupt raised at an arbitrary point can be dropped by
        Python inside a garbage-collector callback, or break pytest's own fixture teardown);
        a second signal stops at once. An xdist controller runs no check and stops at once.
        """
        if threading.current_thread() is not threading.main_thread():
            return
        reasons = {signal.SIGINT: "interrupted (SIGINT)", signal.SIGTERM: "terminated (SIGTERM)"}
        controller = bool(self.config.getoption("numprocesses", default=None))

        def stop(signum: int, frame: Any) -> None:
            reason = reasons[signal.Signals(signum)]
            first = self.reporter.interrupted is None
            if first:
                self.reporter.interrupted = reason
            if controller or not first:
                raise KeyboardInterrupt
            session.shouldstop = reason
            os.write(2, b"\nmemconform: stopping after the running check "
                        b"(signal again to stop at once)\n")

        for sig in reasons:
            signal.signal(sig, stop)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        """A check that would start after the signal does not run."""
        return True if self.reporter.interrupted is not None else None

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        if self.reporter.interrupted is None:
            self.reporter.interrupted = "interrupted (SIGINT)"

    def _identify(self) -> None:
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
            scope=None if handshake.scope is None else sorted(handshake.scope),
            details=handshake.raw["implementation"],
            follows={"codex": handshake.follows[0], "layout": handshake.follows[1]})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self.reporter.selected = self.total
        self._start_live()

    def _start_live(self) -> None:
        if self.config.getoption("--progress") != "live" or self.live is not None:
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        self.live = LiveProgress(terminal._tw._file)
        self.live.total = self.total
        self.live.start()

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self.live is not None:
            self.live.running(nodeid.rsplit("::", 1)[-1])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.total = len(ids)
        self.reporter.selected = self.total
        self._start_live()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        phase = _phase(report)
        if phase is None:
            return
        phase["duration"] = report.duration
        if phase.get("replaces"):
            self._uncount(report.nodeid, phase["replaces"])
        entry = self.phases.setdefault(report.nodeid, {})
        entry[report.when] = phase
        if report.when == "teardown":
            record = _record(entry)
            record["repro"] = repro(self.config, record["id"])
            self.reporter.add(record)
            self._progress(record)

    def _uncount(self, nodeid: str, category: str) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        reports = getattr(terminal, "stats", {}).get(category, [])
        for counted in reports:
            if getattr(counted, "nodeid", None) == nodeid and counted.when != "teardown":
                reports.remove(counted)
                break

    def _progress(self, record: dict[str, Any]) -> None:
        if self.live is not None:
            self.live.finished(record)
            return
        if self.config.getoption("--progress") != "lines":
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        done = len(self.reporter.records)
        width = len(str(self.total or done))
        status = record["status"]
        line = f"[{done:>{width}}/{self.total or '?'}] {status:<15} {record['id']}"
        if status in FAILING:
            terminal.write_line(f"{line}\n    {record['sentence']}\n    repro: "
                                f"{record['repro']}", red=True)
        else:
            terminal.write_line(line)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        bad = [r for r in self.reporter.records if r["status"] in FAILING]
        if bad:
            terminalreporter.section("memconform: failures", sep="=")
            for record in sorted(bad, key=lambda r: r["id"]):
                terminalreporter.write_line(f"{record['status'].upper()} {record['id']}")
                for line in record["message"].splitlines():
                    terminalreporter.write_line(f"    {line}")
                terminalreporter.write_line(f"    repro: {record['repro']}")
                if record.get("bundle"):
                    terminalreporter.write_line(f"    bundle: {record['bundle']}")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.getoption("collectonly"):
            return
        if self.live is not None:
            self.live.stop()
            self.live = None
        if self.reporter.interrupted is None:
            if exitstatus == pytest.ExitCode.INTERRUPTED:
                self.reporter.interrupted = "interrupted"
            elif session.shouldstop or session.shouldfail:
                why = session.shouldstop or session.shouldfail
                self.reporter.interrupted = f"stopped early: {why}"
        elif exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            # the signal's KeyboardInterrupt was dropped after the last check had started
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        manifest = json.loads(resources.doc("MANIFEST.json").read_text(encoding="utf-8"))
        self.reporter.stale = self.expectations.stale(
            [(c["id"], c["area"]) for c in manifest["checks"]], self.reporter.records)
        self.reporter.write()


def _record(phases: dict[str, Any]) -> dict[str, Any]:
    setup, call, teardown = phases["setup"], phases.get("call"), phases.get("teardown")
    final: dict[str, Any] = call if call is not None and setup["status"] == "pass" else setup
    if teardown and teardown["tally"] == "error":
        final = {**final, **{k: v for k, v in teardown.items()
                             if k in ("sentence", "expected", "actual", "diff", "where",
                                      "message")}, "status": "error"}
    record = {key: final[key] for key in ("id", "area", "level", "rules", "title", "status",
                                          "sentence", "message")}
    for key in ("expected", "actual", "diff", "where", "stderr", "traceback", "expectation",
                "bundle"):
        if final.get(key) is not None:
            record[key] = final[key]
    if final.get("facts"):
        record["facts"] = final["facts"]
    record["test"] = final["test"]
    record["duration_s"] = round(sum(p["duration"] for p in phases.values()), 4)
    record["type"] = "check"
    return record

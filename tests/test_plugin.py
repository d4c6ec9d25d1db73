"""The plugin's status vocabulary, expectations handling and report files, via pytester."""

from __future__ import annotations

import json
import types

import pytest

from memconform import plugin

FAKE_IMPL = '''
class Fake:
    def handle(self, message):
        op, seq, args = message["op"], message["seq"], message["args"]
        if op == "start":
            return {"seq": seq, "ok": True, "result": {
                "implementation": {"name": "fake", "version": "9"}, "protocol_version": 1,
                "capabilities": ["startup", "tokens.approx"]}}
        if op == "stop":
            return {"seq": seq, "ok": True, "result": {}}
        if args.get("text") == "boom":
            return {"seq": seq, "ok": False, "error": {"kind": "internal", "message": "kaput"}}
        return {"seq": seq, "ok": True, "result": {"tokens": len(args["text"])}}


def factory():
    return Fake()
'''

CHECKS = '''
import pytest
from memconform.registry import check

def meta(name, level="MUST", needs=()):
    return check(f"demo.{name}", title=name, rules="TOK-01", level=level, area="tokens",
                 needs=needs)

@meta("passes")
def test_passes(impl):
    assert impl.call("tokens.approx", {"text": "ab"})["tokens"] == 2

@meta("fails")
def test_fails(impl):
    assert impl.call("tokens.approx", {"text": "ab"})["tokens"] == 3

@meta("known-failure")
def test_known_failure(impl):
    assert False, "known"

@meta("fixed-failure")
def test_fixed_failure(impl):
    assert True

@meta("optional", level="SHOULD", needs=("config.resolve",))
def test_optional(impl):
    raise AssertionError("never runs")

@meta("must-optional", needs=("config.resolve",))
def test_must_optional(impl):
    raise AssertionError("never runs")

@meta("adapter-breaks")
def test_adapter_breaks(impl):
    impl.call("tokens.approx", {"text": "boom"})

@meta("check-bug")
def test_check_bug(impl):
    {}["missing"]

@meta("hangs")
def test_hangs(impl):
    raise AssertionError("skipped by expectations")

@pytest.fixture
def broken_fixture():
    raise RuntimeError("setup broke")

@meta("setup-breaks")
def test_setup_breaks(broken_fixture):
    pass
'''

EXPECTATIONS = '''
["demo.known-failure"]
status = "fail"
reason = "documented bug"
["demo.fixed-failure"]
status = "fail"
reason = "was broken once"
["demo.hangs"]
status = "skip"
reason = "hangs the implementation"
'''

EXPECTED = {
    "demo.passes": "pass", "demo.fails": "fail", "demo.known-failure": "xfail",
    "demo.fixed-failure": "xpass", "demo.optional": "unsupported", "demo.must-optional": "fail",
    "demo.adapter-breaks": "error", "demo.check-bug": "error", "demo.hangs": "skip",
    "demo.setup-breaks": "error",
}


@pytest.fixture
def demo(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(fake_impl=FAKE_IMPL, test_demo=CHECKS)
    pytester.makefile(".toml", expectations=EXPECTATIONS)
    pytester.syspathinsert()
    return pytester


def test_every_status_is_reported(demo: pytest.Pytester) -> None:
    result = demo.runpytest("--impl", "python:fake_impl:factory", "--report-dir", "out",
                            "--expectations", "expectations.toml", "-p", "no:cacheprovider")
    lines = [json.loads(x) for x in (demo.path / "out" / "report.jsonl").read_text()
             .splitlines()]
    records = {r["id"]: r for r in lines if r["type"] == "check"}
    assert {k: r["status"] for k, r in records.items()} == EXPECTED
    assert records["demo.must-optional"]["message"].startswith("MUST-level check cannot be")
    assert "kaput" in records["demo.adapter-breaks"]["message"]
    assert records["demo.known-failure"]["expected"] == "fail"
    header, footer = lines[0], lines[-1]
    assert header["implementation"]["name"] == "fake"
    assert header["implementation"]["capabilities"] == ["startup", "tokens.approx"]
    assert footer["complete"] and footer["counts"]["error"] == 3
    assert footer["stale_expectations"] == ["demo.known-failure", "demo.fixed-failure",
                                            "demo.hangs"], "demo ids are not in the manifest"
    assert (demo.path / "out" / "junit.xml").is_file()
    assert (demo.path / "out" / "summary.md").is_file()
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 1 and outcomes.get("passed") == 1


def test_area_filter_deselects(demo: pytest.Pytester) -> None:
    result = demo.runpytest("--impl", "python:fake_impl:factory", "--area", "store")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_snapshot_update_refused_under_xdist(demo: pytest.Pytester) -> None:
    result = demo.runpytest("--impl", "python:fake_impl:factory", "--snapshot-update",
                            "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snapshot-update cannot run under xdist*"])


def test_check_without_metadata_in_checks_package_is_refused(pytestconfig: pytest.Config
                                                              ) -> None:
    class BareItem:
        nodeid = "test_bare.py::test_bare"
        module = types.ModuleType("memconform.checks.test_bare")

        def get_closest_marker(self, name: str) -> None:
            return None

    with pytest.raises(pytest.UsageError, match="a check without @check metadata"):
        plugin.pytest_collection_modifyitems(pytestconfig, [BareItem()])  # type: ignore[list-item]


def test_bad_expectations_file_is_a_usage_error(demo: pytest.Pytester) -> None:
    demo.makefile(".toml", bad='["x"]\nstatus = "maybe"\nreason = "r"\n')
    result = demo.runpytest("--impl", "python:fake_impl:factory", "--expectations", "bad.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR

"""The plugin's status vocabulary, expectations handling and report files, via pytester."""

from __future__ import annotations

import json
import types
import xml.etree.ElementTree as ET

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

@pytest.fixture
def unmet(impl):
    got = impl.call("tokens.approx", {"text": "abc"})["tokens"]
    assert got == 1, "the implementation's answer is not the precondition"

@meta("precondition-unmet")
def test_precondition_unmet(unmet):
    pass

@meta("produced-nothing")
def test_produced_nothing(impl, tmp_path):
    impl.call("tokens.approx", {"text": "a"})
    (tmp_path / "codex-home" / "memories" / "raw_memories.md").read_text()

@meta("compared")
def test_compared(impl):
    tokens = impl.call("tokens.approx", {"text": "line one\\nline two"})["tokens"]
    assert f"tokens: {tokens}\\nsecond line" == "tokens: 4\\nsecond line", "wrong count"
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
    "demo.setup-breaks": "error", "demo.precondition-unmet": "fail",
    "demo.produced-nothing": "fail", "demo.compared": "fail",
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
    assert records["demo.known-failure"]["expectation"] == {
        "key": "demo.known-failure", "status": "fail", "reason": "documented bug"}
    compared = records["demo.compared"]
    assert compared["sentence"] == "wrong count"
    assert (compared["expected"], compared["actual"]) == ("tokens: 4\nsecond line",
                                                          "tokens: 17\nsecond line")
    assert "-tokens: 4\n+tokens: 17" in compared["diff"]
    assert records["demo.produced-nothing"]["sentence"] == (
        "<tmp>/codex-home/memories/raw_memories.md does not exist: the implementation did not "
        "write it")
    assert records["demo.precondition-unmet"]["sentence"] == (
        "the implementation's answer is not the precondition")
    assert records["demo.check-bug"]["sentence"] == "harness error: KeyError: 'missing'"
    assert records["demo.fails"]["repro"] == (
        "memconform run --impl python:fake_impl:factory --id demo.fails")
    assert records["demo.fails"]["test"] == "test_demo::test_fails"
    for record in records.values():
        assert " at 0x" not in record["message"] and "/tmp/" not in record["message"]
    header, footer = lines[0], lines[-1]
    assert header["implementation"]["name"] == "fake"
    assert header["implementation"]["capabilities"] == ["startup", "tokens.approx"]
    assert footer["complete"] and footer["counts"]["error"] == 3
    assert footer["stale_expectations"] == ["demo.known-failure", "demo.fixed-failure",
                                            "demo.hangs"], "demo ids are not in the manifest"
    assert (demo.path / "out" / "summary.md").is_file()
    # one count everywhere: pytest's summary line, the footer and junit.xml
    outcomes = result.parseoutcomes()
    counts = {k: v for k, v in footer["counts"].items() if v}
    assert {"errors" if k == "error" else k: v for k, v in counts.items()} == outcomes
    suite = ET.parse(demo.path / "out" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        str(len(EXPECTED)), str(counts["fail"] + counts["xpass"]), str(counts["error"]))
    names = {case.get("name"): case.get("classname") for case in suite.iter("testcase")}
    assert names == {check_id: "tokens" for check_id in EXPECTED}


def test_two_runs_give_identical_records(demo: pytest.Pytester) -> None:
    def run(out: str) -> list[dict[str, object]]:
        demo.runpytest("--impl", "python:fake_impl:factory", "--report-dir", out,
                       "--expectations", "expectations.toml", "-p", "no:cacheprovider")
        lines = [json.loads(x) for x in (demo.path / out / "report.jsonl").read_text()
                 .splitlines()]
        return [{k: v for k, v in r.items() if k != "duration_s"} for r in lines
                if r["type"] == "check"]

    assert run("first") == run("second")


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


def test_also_impl_runs_each_check_against_both(demo: pytest.Pytester) -> None:
    """--also-impl (mutation runs): every check that uses the implementation runs against
    --impl (`impl-0`) and the extra one (`impl-1`), each with its own adapter."""
    (demo.path / "fake_impl.py").write_text(FAKE_IMPL + '''

class Hundredfold(Fake):
    def handle(self, message):
        reply = super().handle(message)
        if message["op"] == "tokens.approx" and reply["ok"]:
            reply["result"]["tokens"] *= 100
        return reply


def hundredfold():
    return Hundredfold()
''')
    demo.runpytest("--impl", "python:fake_impl:factory", "--also-impl",
                   "python:fake_impl:hundredfold", "--adapter-per-check", "--report-dir",
                   "out", "-k", "compared or passes", "-p", "no:cacheprovider")
    lines = [json.loads(x) for x in (demo.path / "out" / "report.jsonl").read_text()
             .splitlines()]
    records = {r["id"]: r for r in lines if r["type"] == "check"}
    assert set(records) == {"demo.passes[impl-0]", "demo.passes[impl-1]",
                            "demo.compared[impl-0]", "demo.compared[impl-1]"}
    first, second = (records[f"demo.compared[impl-{n}]"]["message"] for n in (0, 1))
    assert "+tokens: 17" in first and "+tokens: 1700" not in first
    assert "+tokens: 1700" in second


def test_also_impl_needs_an_adapter_per_check(demo: pytest.Pytester) -> None:
    result = demo.runpytest("--impl", "python:fake_impl:factory", "--also-impl",
                            "python:fake_impl:factory")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--also-impl needs --adapter-per-check*"])

"""Report files, exit codes and the Markdown summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from memconform import report as rep


def record(check_id: str, status: str, area: str = "config", level: str = "MUST"
           ) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "check", "id": check_id, "area": area, "level": level,
                           "rules": ["CFG-01"], "title": "t", "status": status, "sentence": "",
                           "message": "", "test": check_id, "duration_s": 0.01}
    if status == "fail":
        out.update(sentence="the clamped value is wrong", expected="4096", actual="0",
                   repro=f"memconform run --impl ref --id '{check_id}'")
    return out


@pytest.mark.parametrize(("statuses", "stale", "strict", "code"), [
    (["pass", "xfail", "unsupported", "skip"], [], False, 0),
    (["pass", "fail"], [], False, 1),
    (["pass", "xpass"], [], False, 1),
    (["fail", "error"], [], False, 3),
    (["pass"], ["gone"], False, 0),
    (["pass"], ["gone"], True, 1),
    ([], [], False, 2),
])
def test_exit_codes(statuses: list[str], stale: list[str], strict: bool, code: int) -> None:
    records = [record(f"c{i}", s) for i, s in enumerate(statuses)]
    assert rep.exit_code(records, stale, strict) == code


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    reporter = rep.Reporter(tmp_path / "out", {"impl": "ref"})
    reporter.implementation.update(name="memref", version="0.1.0")
    reporter.add(record("b.check", "pass"))
    reporter.add(record("a.check", "fail", area="store"))
    reporter.write()
    header, records, footer = rep.load(tmp_path / "out" / "report.jsonl")
    assert header["suite"] == "memconform" and header["protocol_version"] == 1
    assert header["implementation"]["name"] == "memref"
    assert set(header["environment"]) == {"python", "sqlite", "platform", "cpus"}
    assert [r["id"] for r in records] == ["a.check", "b.check"]
    assert footer["complete"] is True
    assert footer["counts"]["fail"] == 1 and footer["by_area"]["store"]["fail"] == 1
    assert (tmp_path / "out" / "summary.md").is_file()


@pytest.mark.parametrize(("lines", "message"), [
    ([], "no header"),
    ([{"type": "header"}], "incomplete"),
    ([{"type": "header"}, {"type": "footer", "complete": False}], "incomplete"),
])
def test_incomplete_reports_are_errors(tmp_path: Path, lines: list[dict[str, Any]],
                                       message: str) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(rep.ReportError, match=message):
        rep.load(path)


def test_agreement_counts_only_checks_that_ran() -> None:
    records = [record("a", "pass"), record("b", "fail"), record("c", "unsupported"),
               record("d", "skip"), record("e", "xfail")]
    assert rep.agreement(records) == (1, 3)


def test_markdown_summary(snapshot: SnapshotAssertion) -> None:
    header = {"suite_version": "0.1.0", "protocol_version": 1,
              "implementation": {"name": "memref", "version": "0.1.0"}}
    records = [record("config.defaults", "pass"), record("config.clamp[x]", "fail"),
               record("store.schema", "xfail", area="store"),
               record("tokens.approx[a]", "unsupported", area="tokens", level="SHOULD")]
    assert rep.markdown(header, records, ["gone.check"]) == snapshot

"""Expectation files: parsing, most-specific lookup, staleness and regeneration."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.expectations import Expectations, ExpectationsError, dump, updated


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_lookup_prefers_the_most_specific_key(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '''
["config"]
status = "fail"
reason = "whole area"
["config.clamp[max_unused_days-low]"]
status = "skip"
reason = "hangs"
'''))
    assert exp.lookup("config.defaults").reason == "whole area"  # type: ignore[union-attr]
    assert exp.lookup("config.clamp[max_unused_days-low]").status == "skip"  # type: ignore[union-attr]
    assert exp.lookup("configx.other") is None
    assert exp.lookup("store.schema") is None


def test_prefix_matches_parametrized_cases_only_at_boundaries(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '["tokens.approx"]\nstatus = "fail"\nreason = "r"\n'))
    assert exp.lookup("tokens.approx[empty]") is not None
    assert exp.lookup("tokens.approximate") is None


@pytest.mark.parametrize(("text", "message"), [
    ('["a"]\nstatus = "pass"\nreason = "r"\n', "status must be one of"),
    ('["a"]\nstatus = "fail"\n', "non-empty reason"),
    ('["a"]\nstatus = "fail"\nreason = "r"\ncolour = 1\n', "unknown fields"),
    ('a = 1\n', "must be a table"),
    ('["a"\n', "not valid TOML"),
])
def test_bad_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ExpectationsError, match=message):
        Expectations.load(write(tmp_path, text))


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match="no such expectations file"):
        Expectations.load(tmp_path / "absent.toml")


def test_stale_entries_cover_no_check(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '["gone.check"]\nstatus = "fail"\nreason = "r"\n'
                                            '["store"]\nstatus = "fail"\nreason = "r"\n'))
    assert exp.stale(["store.schema[jobs]", "config.defaults"]) == ["gone.check"]


def test_update_keeps_reasons_drops_fixed_and_adds_new(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '''
["a.one"]
status = "fail"
reason = "known"
evidence = "row"
["a.fixed"]
status = "fail"
reason = "was broken"
["a.hang"]
status = "skip"
reason = "hangs"
'''))
    records = [{"id": "a.one", "status": "xfail", "message": ""},
               {"id": "a.fixed", "status": "xpass", "message": ""},
               {"id": "a.new", "status": "fail", "message": "assert 1 == 2\nmore"}]
    table = updated(exp, records)
    assert table == {
        "a.hang": {"status": "skip", "reason": "hangs"},
        "a.new": {"status": "fail", "reason": "TODO: explain (new failure)",
                  "evidence": "assert 1 == 2"},
        "a.one": {"status": "fail", "reason": "known", "evidence": "row"},
    }
    round_trip = Expectations.load(write(tmp_path, dump(table)))
    assert [e.key for e in round_trip.entries] == ["a.hang", "a.new", "a.one"]

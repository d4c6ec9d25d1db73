"""Expectation files: parsing, most-specific lookup, strictness, staleness and regeneration."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.expectations import NEW_REASON, Expectations, ExpectationsError, updated


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


def test_area_names_cover_their_checks_least_specifically(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '''
["phase1"]
status = "fail"
reason = "no Phase 1 yet"
["p1.cand"]
status = "fail"
reason = "candidates"
'''))
    assert exp.lookup("p1.out.row", "phase1").key == "phase1"  # type: ignore[union-attr]
    assert exp.lookup("p1.cand.window", "phase1").key == "p1.cand"  # type: ignore[union-attr]
    assert exp.lookup("p2.job.claim", "phase2") is None


def test_only_an_entry_for_one_record_is_strict(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '["p1.cand.select"]\nstatus = "fail"\nreason = "r"\n'
                                            '["p1.job.success"]\nstatus = "fail"\nreason = "r"\n'))
    group = exp.lookup("p1.cand.select[archived]")
    one = exp.lookup("p1.job.success")
    assert group is not None and not group.strict_for("p1.cand.select[archived]")
    assert one is not None and one.strict_for("p1.job.success")


def test_prefix_matches_parametrized_cases_only_at_boundaries(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '["tokens.approx"]\nstatus = "fail"\nreason = "r"\n'))
    assert exp.lookup("tokens.approx[empty]") is not None
    assert exp.lookup("tokens.approximate") is None


@pytest.mark.parametrize(("text", "message"), [
    ('["a"]\nstatus = "pass"\nreason = "r"\n', "status must be one of"),
    ('["a"]\nstatus = "error"\nreason = "r"\n', "adapter or the harness broke"),
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


def test_non_utf8_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('["a"]\nstatus = "fail"\nreason = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(ExpectationsError, match="not UTF-8 text"):
        Expectations.load(path)


def record(check_id: str, status: str, area: str = "a", sentence: str = "") -> dict[str, str]:
    return {"id": check_id, "area": area, "status": status, "sentence": sentence}


def test_stale_entries_cover_no_check_or_nothing_fails_under_them(tmp_path: Path) -> None:
    exp = Expectations.load(write(tmp_path, '["gone.check"]\nstatus = "fail"\nreason = "r"\n'
                                            '["store"]\nstatus = "fail"\nreason = "r"\n'
                                            '["config"]\nstatus = "fail"\nreason = "r"\n'))
    known = [("store.schema[jobs]", "store"), ("config.defaults", "config")]
    assert exp.stale(known) == ["gone.check"]
    ran = [record("store.schema[jobs]", "pass", "store"),
           record("config.defaults", "xfail", "config")]
    assert exp.stale(known, ran) == ["gone.check", "store"]


EXISTING = '''# expectations of my port
["a.one"]  # the cursor bug
status = "fail"
reason = "known"
evidence = "row"

["a.fixed"]
status = "fail"
reason = "was broken"

["a.hang"]
status = "skip"
reason = "hangs"

["b"]
status = "fail"
reason = "not run this time"
'''


def test_update_keeps_comments_and_reasons_drops_fixed_and_adds_new() -> None:
    records = [record("a.one", "xfail"), record("a.fixed", "xpass"),
               record("a.new", "fail", sentence="the row was not written")]
    text = updated(EXISTING, records)
    assert text.startswith("# expectations of my port\n")
    assert '["a.one"]  # the cursor bug' in text
    assert "a.fixed" not in text
    table = Expectations.load_text(text)
    assert {e.key: (e.status, e.reason, e.evidence) for e in table.entries} == {
        "a.one": ("fail", "known", "row"), "a.hang": ("skip", "hangs", ""),
        "b": ("fail", "not run this time", ""),
        "a.new": ("fail", NEW_REASON, "the row was not written")}
    assert updated(text, records) == text, "a second update changes nothing"

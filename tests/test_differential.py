"""`memconform diff`: two implementations' end states compared check by check."""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from memconform import differential
from memconform.home import uuid7

ADAPTERS = Path(__file__).parent / "adapters"
DIFFERS = "python:differs:factory"
THREAD = "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"
CHECK = "p2.fs.raw-memories"  # one startup: seeded outputs, raw_memories.md, one consolidation


def _state(**changes: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "now_ms": 1_780_000_000_000,
        "db": {"memories_1.sqlite": {"jobs": {"key": ["kind", "job_key"], "rows": [
            {"kind": "memory_stage1", "job_key": "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b",
             "status": "done", "finished_at": 1_780_000_003,
             "ownership_token": "0b5e3a8e-1111-4222-8333-444455556666"}]}}},
        "files": {"raw_memories.md": "# Raw Memories\n"},
        "git": None,
        "requests": {"stage1#1": {"path": "/v1/responses", "body": {"model": "m"}}},
        "answers": [{"op": "startup", "ok": True, "result": {}}],
    }
    for path, value in changes.items():
        target = state
        *parents, last = path.split("/")
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[last] = value
    return state


def test_normalization_keeps_seeded_ids_and_makes_times_relative() -> None:
    a = _state()
    b = _state()
    # another run: its own token, a clock 5 s later, finished 3 s after it as a was
    b["db"]["memories_1.sqlite"]["jobs"]["rows"][0].update(
        ownership_token="99999999-aaaa-4bbb-8ccc-dddddddddddd", finished_at=1_780_000_008)
    b["now_ms"] = 1_780_000_005_000
    found, only_a, only_b = differential.compare({"x": {"status": "pass", "state": a}},
                                                 {"x": {"status": "pass", "state": b}}, [])
    assert found[0].found == [] and only_a == only_b == []


def test_one_row_one_byte_one_field_each_reported_once() -> None:
    a = _state()
    b = _state(**{"files/raw_memories.md": "# Raw Memories.",
                  "requests/stage1#1/body/model": "other"})
    b["db"]["memories_1.sqlite"]["jobs"]["rows"][0]["status"] = "error"
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": a}},
                                          {"x": {"status": "fail", "state": b}}, [])
    assert sorted(d["where"] for d in result.found) == [
        'db["memories_1.sqlite"].jobs["memory_stage1|019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"]'
        ".status", 'files["raw_memories.md"]', 'requests["stage1#1"].body.model']


def test_allowances_cover_by_glob_and_stale_ones_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "allowed.toml"
    path.write_text('[[allow]]\nchecks = ["x"]\nwhere = [\'requests["stage1#*"].body.*\']\n'
                    'reason = "prompt wording is each implementation\'s own"\n'
                    '[[allow]]\nchecks = ["*"]\nwhere = ["answers*"]\nreason = "unused"\n')
    allowed = differential.load_allowed(path)
    b = _state(**{"requests/stage1#1/body/model": "other"})
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": _state()}},
                                          {"x": {"status": "pass", "state": b}}, allowed)
    assert [d["allowed"] for d in result.found] == ["prompt wording is each implementation's own"]
    data = differential.summary([result], ("a", "b"), allowed, ([], []))
    assert data["undeclared"] == 0 and data["allowed"] == 1
    assert [s["where"] for s in data["stale_allowances"]] == [["answers*"]]


@pytest.mark.parametrize("text, problem", [
    ('[[allow]]\nchecks = ["x"]\nwhere = ["y"]\n', "needs exactly checks, where and reason"),
    ('[[allow]]\nchecks = []\nwhere = ["y"]\nreason = "r"\n', "non-empty lists"),
    ("[other]\n", "only [[allow]] entries"),
    ("[[allow]\n", "not valid TOML"),
])
def test_a_bad_allowed_file_is_one_clear_error(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "allowed.toml"
    path.write_text(text)
    with pytest.raises(differential.DiffError, match=problem.replace("[", r"\[")):
        differential.load_allowed(path)


def test_diff_reports_exactly_the_three_differences(tmp_path: Path) -> None:
    env_path = str(ADAPTERS)
    result = run_cli("diff", "--impl", "ref", "--impl", DIFFERS, "--id", CHECK, "--out",
                     str(tmp_path / "out"), "--format", "json", cwd=tmp_path,
                     env={"PYTHONPATH": env_path})
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    data = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))
    [entry] = data["results"]
    wheres = sorted(d["where"] for d in entry["differences"])
    assert wheres == [
        'db["memories_1.sqlite"].jobs["memory_consolidate_global|global"].retry_remaining',
        'files["raw_memories.md"]',
        'requests["consolidation#1"].body.service_tier'], wheres
    assert data["undeclared"] == 3 and (tmp_path / "out" / "diff.md").is_file()
    page = (tmp_path / "out" / "diff.html").read_text(encoding="utf-8")
    assert page.count('<tr class="undeclared">') == 3 and "service_tier" in page


def test_the_same_implementation_twice_has_no_difference(tmp_path: Path) -> None:
    result = run_cli("diff", "--impl", "ref", "--impl", f"exec:{sys.executable} -m memref.stdio",
                     "--id", CHECK, "--id", "p1.out.row", "--out", str(tmp_path / "out"),
                     cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:]
    data = json.loads((tmp_path / "out" / "diff.json").read_text(encoding="utf-8"))
    assert data["checks"] == 2 and data["undeclared"] == 0 and data["results"] == []


def _clocked(now_ms: int, *, token: str, note_stamp: str) -> dict[str, Any]:
    """A state whose seeded thread id and row time come from the clock `now_ms`."""
    rng = random.Random(7)
    seeded = uuid7(rng, now_ms - 7_200_000)
    state = _state()
    state["now_ms"] = now_ms
    state["db"]["memories_1.sqlite"]["jobs"]["rows"][0].update(
        job_key=seeded, ownership_token=token, finished_at=now_ms // 1000)
    state["files"] = {f"extensions/ad_hoc/notes/{note_stamp}-x.md": f"{seeded.upper()}\n"}
    return state


def test_seeded_times_and_clock_derived_ids_pair_up_across_clocks() -> None:
    """Sides ten minutes apart: a time both sides hold literally (a note the harness named)
    stays; a v7 id seeded from each side's clock pairs by its random bits and relative time,
    in either case; the tokens each side drew are numbered; nothing differs."""
    a = _clocked(1_780_000_000_000, token="0b5e3a8e-1111-4222-8333-444455556666",
                 note_stamp="2026-05-26T13-42-08")
    b = _clocked(1_780_000_600_000, token="99999999-aaaa-4bbb-8ccc-dddddddddddd",
                 note_stamp="2026-05-26T13-42-08")
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": a}},
                                          {"x": {"status": "pass", "state": b}}, [])
    assert result.found == []
    b["files"] = {"extensions/ad_hoc/notes/2026-05-26T13-43-08-x.md": "other\n"}
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": a}},
                                          {"x": {"status": "pass", "state": b}}, [])
    # two names that differ: each normalized, each missing on the other side
    assert sorted((d["a"] == "<absent>", d["b"] == "<absent>") for d in result.found) == [
        (False, True), (True, False)], result.found


def test_an_expected_failure_lists_its_differences_as_known() -> None:
    b = _state(**{"files/raw_memories.md": "# other\n"})
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": _state()}},
                                          {"x": {"status": "xfail", "state": b}}, [])
    assert result.undeclared == [] and len(result.found) == 1
    assert result.found[0]["allowed"].startswith("a known divergence")


def _seeded_rollout(now: str, minutes_before: int) -> dict[str, Any]:
    """A state whose clock is `now`, with a thread row whose rollout was written
    `minutes_before` it (in its day's directory, as Codex files rollouts)."""
    clock = datetime.fromisoformat(now)
    moment = clock - timedelta(minutes=minutes_before)
    path = (f"<tmp>/codex-home/sessions/{moment:%Y/%m/%d}/rollout-{moment:%Y-%m-%dT%H-%M-%S}-"
            f"{THREAD}.jsonl")
    state = _state(now_ms=int(clock.timestamp() * 1000))
    state["db"]["state_5.sqlite"] = {"threads": {"key": ["id"], "rows": [
        {"id": THREAD, "rollout_path": path}]}}
    return state


def test_a_rollout_day_directory_follows_its_relative_time_across_midnight() -> None:
    """A thread seeded 6 minutes before each side's clock: one clock just after midnight puts
    its rollout under the previous day's directory, the other under the same day's."""
    a = _seeded_rollout("2026-12-05T00:05:00+00:00", 6)
    b = _seeded_rollout("2026-12-05T00:15:00+00:00", 6)
    assert "/2026/12/04/" in json.dumps(a) and "/2026/12/05/" in json.dumps(b)
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": a}},
                                          {"x": {"status": "pass", "state": b}}, [])
    assert result.found == []
    later = _seeded_rollout("2026-12-05T00:15:00+00:00", 26)  # another relative time
    [result], _, _ = differential.compare({"x": {"status": "pass", "state": a}},
                                          {"x": {"status": "pass", "state": later}}, [])
    assert [d["where"] for d in result.found] == [
        f'db["state_5.sqlite"].threads["{THREAD}"].rollout_path'], \
        result.found

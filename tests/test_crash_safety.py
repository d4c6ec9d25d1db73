"""The reference survives kill -9 anywhere in a startup: the next startup converges to the end
state of an uninterrupted run, and no half-written file is ever kept or committed."""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform import mockmodel as mm
from memconform.adapters import AdapterError, resolve
from memconform.adapters.stdio import StdioTransport
from memconform.checks.consolidation import DONE
from memconform.clock import FIXED_EPOCH_MS
from memconform.home import HOUR_MS, CodexHome
from memref import files
from memref.extensions import AD_HOC_INSTRUCTIONS, seed_ad_hoc_instructions
from memref.materialize import sync_inputs

STDIO_REF = f"exec:{sys.executable} -m memref.stdio"
KILLS = 50
THREADS = 6
PATCH = ("*** Begin Patch\n*** Add File: MEMORY.md\n+# Memory\n+- tabs over spaces\n"
         "*** Add File: memory_summary.md\n+v1\n+The user prefers tabs.\n*** End Patch\n")


def startup_args(home: CodexHome, now_ms: int, seed: int) -> dict[str, Any]:
    return {"home": str(home.path), "now_ms": now_ms, "seed": seed,
            "session": {"source": "cli", "ephemeral": False, "subagent": False,
                        "resume_thread_id": None},
            "env": home.env, "timeout_s": 60}


@pytest.fixture(scope="module")
def mock() -> Iterator[mm.MockModel]:
    server = mm.start_server()
    try:
        yield mm.MockModel(server)
    finally:
        server.clear()
        server.stop()


def build(path: Path, mock: mm.MockModel) -> CodexHome:
    """The same home every time: six idle threads, memories on, the model a little slow."""
    mock.reset()
    for index in range(THREADS):
        output = {"raw_memory": f"- fact {index}", "rollout_summary": f"Summary {index}.",
                  "rollout_slug": f"topic-{index}"}
        mock.on("stage1", mm.json_output(output).after(0.03), contains=f"marker-{index}")
    mock.on("consolidation", mm.message(DONE).after(0.03), has_tool_output=True)
    mock.on("consolidation", mm.custom_tool_call("apply_patch", PATCH, "call_patch").after(0.05),
            has_tool_output=False)
    home = CodexHome(path, now_ms=FIXED_EPOCH_MS, model_base_url=mock.base_url)
    home.write_config(memories={"min_rollout_idle_hours": 1, "max_rollouts_per_startup": 8})
    for index in range(THREADS):
        home.add_thread(updated_ago_ms=(2 + index) * HOUR_MS,
                        user_text=f"Remember marker-{index}.")
    return home


def end_state(home: CodexHome) -> dict[str, Any]:
    """What a run leaves that must not depend on where an earlier run was killed."""
    for db in (home.state_db, home.memories_db):
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",), db
    rows = home.query(home.memories_db, "SELECT thread_id, raw_memory, rollout_summary, "
                      "rollout_slug FROM stage1_outputs ORDER BY thread_id")
    root = home.memory_root
    home_path = str(home.path).encode()

    def placed(data: bytes) -> bytes:  # the homes differ only in their folder's name
        return data.replace(home_path + b"-work", b"<work>").replace(home_path, b"<home>")

    tree = {str(p.relative_to(root)): placed(p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}
    return {"rows": rows, "tree": tree}


def run(home: CodexHome, now_ms: int, seed: int, kill_after_s: float | None = None) -> str:
    """One startup through the stdio reference; killed after `kill_after_s` if given. The
    phase the kill landed in (or `finished`)."""
    adapter = resolve(STDIO_REF, timeout_s=60)
    assert isinstance(adapter.transport, StdioTransport)
    try:
        if kill_after_s is None:
            adapter.call("startup", startup_args(home, now_ms, seed))
            return "finished"
        proc = adapter.transport.proc
        timer = threading.Timer(kill_after_s, proc.kill)
        timer.start()
        try:
            adapter.call("startup", startup_args(home, now_ms, seed))
        except AdapterError as exc:
            assert exc.kind == "crash", exc
        finally:
            timer.cancel()
        if proc.poll() is None:
            return "finished"
        # killed before the schema's transaction committed: the file has no table yet
        tables = home.query(home.memories_db, "SELECT name FROM sqlite_master WHERE "
                            "type = 'table' AND name = 'stage1_outputs'")
        outputs = home.query(home.memories_db, "SELECT COUNT(*) AS n FROM stage1_outputs") \
            if tables else [{"n": 0}]
        return "phase 1" if outputs[0]["n"] < THREADS else "phase 2"
    finally:
        adapter.close()


def test_kill_anywhere_then_converge(tmp_path: Path, mock: mm.MockModel) -> None:
    clean = build(tmp_path / "clean", mock)
    started = time.monotonic()
    run(clean, FIXED_EPOCH_MS, 1)
    span = time.monotonic() - started
    run(clean, FIXED_EPOCH_MS + 2 * HOUR_MS, 2)
    expected = end_state(clean)
    assert len(expected["rows"]) == THREADS and "MEMORY.md" in expected["tree"]

    rng = random.Random(20261204)
    landed: Counter[str] = Counter()
    for index in range(KILLS):
        home = build(tmp_path / f"k{index:02d}", mock)
        landed[run(home, FIXED_EPOCH_MS, 1, kill_after_s=rng.uniform(0.0, span))] += 1
        run(home, FIXED_EPOCH_MS + 2 * HOUR_MS, 2)
        state = end_state(home)
        assert state["rows"] == expected["rows"], f"kill {index}: stage-1 rows differ"
        for name in sorted(set(state["tree"]) | set(expected["tree"])):
            assert state["tree"].get(name) == expected["tree"].get(name), \
                f"kill {index} ({landed}): {name} differs"
        ad_hoc = home.memory_root / "extensions" / "ad_hoc" / "instructions.md"
        assert ad_hoc.read_text(encoding="utf-8") == AD_HOC_INSTRUCTIONS
    print(f"\n{KILLS} kills over {span:.2f} s: {dict(landed)}")
    assert landed["phase 1"] and landed["phase 2"], f"kills did not reach both phases: {landed}"


def test_an_empty_seed_left_by_a_killed_writer_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "extensions" / "ad_hoc" / "instructions.md"
    target.parent.mkdir(parents=True)
    target.write_text("")
    assert seed_ad_hoc_instructions(tmp_path)
    assert target.read_text(encoding="utf-8") == AD_HOC_INSTRUCTIONS
    target.write_text("my own instructions\n")
    assert not seed_ad_hoc_instructions(tmp_path)
    assert target.read_text() == "my own instructions\n"


def test_a_write_killed_midway_keeps_the_old_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "raw_memories.md"
    target.write_text("old\n")

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("memref.files.os.replace", killed)
    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(target, "new\n" * 1000)
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target], "the temporary file was left behind"


def test_leftover_temporary_files_never_reach_the_baseline(tmp_path: Path) -> None:
    summaries = tmp_path / "rollout_summaries"
    summaries.mkdir()
    (tmp_path / ".tmp-abc.part").write_text("half")
    (summaries / ".tmp-def.part").write_text("half")
    sync_inputs(tmp_path, [])
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["raw_memories.md",
                                                           "rollout_summaries"]


def test_a_fresh_leftover_beside_the_seed_goes_at_the_next_startup(tmp_path: Path) -> None:
    """A writer killed a moment ago left its temporary file: the next startup, right after,
    removes it (the kill-anywhere run above found one left behind under an age rule)."""
    folder = tmp_path / "extensions" / "ad_hoc"
    folder.mkdir(parents=True)
    (folder / ".tmp-5813vkqt.part").write_text("")
    assert seed_ad_hoc_instructions(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["instructions.md"]


def test_a_temporary_file_swept_by_a_concurrent_startup_is_written_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "instructions.md"
    real_link = os.link
    swept: list[str] = []

    def link_after_a_sweep(src: str, dst: str) -> None:
        if not swept:  # a concurrent startup removes every leftover, this one's included
            swept.append(src)
            files.remove_leftovers(tmp_path)
        real_link(src, dst)

    monkeypatch.setattr("memref.files.os.link", link_after_a_sweep)
    assert files.create_atomic(target, "seeded\n")
    assert swept and target.read_text() == "seeded\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["instructions.md"]

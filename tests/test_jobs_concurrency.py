"""Real concurrency on one memories DB: processes racing for stage-1 claims (BEGIN IMMEDIATE)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

from memref import jobs, store
from memref.layout import V1
from memref.stage1_output import StageOneOutput

NOW = 1_780_315_200
WORKERS = 6
THREADS = [f"thread-{i:02d}" for i in range(24)]


def _claim_once(args: tuple[str, int]) -> str:
    home, worker = args
    con = store.open_memories_db(Path(home))
    try:
        result = jobs.claim_stage1(con, "contested", 100, worker=f"w{worker}",
                                   token=f"token-{worker}", now=NOW, max_running=WORKERS)
        return result.outcome.value
    finally:
        con.close()


def _work(args: tuple[str, int]) -> list[str]:
    """Claim every thread it can and finish it with its own memory; the threads it committed."""
    home, worker = args
    con = store.open_memories_db(Path(home))
    committed = []
    try:
        for thread in THREADS:
            token = f"{worker}-{thread}"
            claim = jobs.claim_stage1(con, thread, 100, worker=f"w{worker}", token=token,
                                      now=NOW, max_running=len(THREADS))
            if claim.outcome is jobs.Claim.CLAIMED:
                output = StageOneOutput(f"memory by {worker}", "summary", None)
                if jobs.succeeded(con, thread, token, 100, output, now=NOW):
                    committed.append(thread)
    finally:
        con.close()
    return committed


def test_one_claim_wins_among_racing_processes(tmp_path: Path) -> None:
    store.open_memories_db(tmp_path).close()
    ctx = multiprocessing.get_context("spawn")
    for round_number in range(3):
        con = sqlite3.connect(tmp_path / V1.db_file)
        con.execute("DELETE FROM jobs")
        con.commit()
        con.close()
        with ctx.Pool(WORKERS) as pool:
            outcomes = pool.map(_claim_once, [(str(tmp_path), w) for w in range(WORKERS)])
        assert outcomes.count("claimed") == 1, (round_number, outcomes)
        assert set(outcomes) <= {"claimed", "skipped_running"}


def test_no_thread_is_committed_twice(tmp_path: Path) -> None:
    store.open_memories_db(tmp_path).close()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        committed = pool.map(_work, [(str(tmp_path), w) for w in range(4)])
    flat = [t for per_worker in committed for t in per_worker]
    assert sorted(flat) == sorted(THREADS), "each thread committed exactly once"
    con = sqlite3.connect(tmp_path / V1.db_file)
    rows = dict(con.execute("SELECT thread_id, raw_memory FROM stage1_outputs").fetchall())
    owners = {t: w for w, per_worker in enumerate(committed) for t in per_worker}
    assert rows == {t: f"memory by {owners[t]}" for t in THREADS}
    done = con.execute("SELECT count(*) FROM jobs WHERE kind = 'memory_stage1' AND "
                       "status = 'done'").fetchone()[0]
    assert done == len(THREADS)

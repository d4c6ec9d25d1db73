"""Synthetic Codex homes at scale, in Codex's schema: thread rows of mixed eligibility and
stage-1 outputs, written in bulk."""

from __future__ import annotations

import random
import sqlite3
import uuid
from pathlib import Path

from memconform.home import create_db

HOUR_MS = 3_600_000
NOW_MS = 1_780_315_200_000  # the harness's fixed clock


def _uuid7(rng: random.Random, at_ms: int) -> str:
    value = (at_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64
    return str(uuid.UUID(int=value | 0b10 << 62 | rng.getrandbits(62)))


def thread_rows(count: int, seed: int = 7) -> list[dict[str, object]]:
    """`count` threads; about half eligible, the rest excluded by one filter each."""
    rng = random.Random(seed)
    rows = []
    for number in range(count):
        updated = NOW_MS - rng.randint(2 * HOUR_MS, 9 * 24 * HOUR_MS)
        row: dict[str, object] = {
            "id": _uuid7(rng, updated - 60_000), "rollout_path": f"/bench/rollout-{number}.jsonl",
            "created_at": (updated - 60_000) // 1000, "updated_at": updated // 1000,
            "source": "cli", "model_provider": "mock", "cwd": "/bench", "title": "t",
            "sandbox_policy": "{}", "approval_mode": "never", "tokens_used": 1,
            "has_user_event": 0, "archived": 0, "git_branch": None, "cli_version": "0.144.6",
            "first_user_message": "hello", "memory_mode": "enabled", "model": "gpt-test",
            "created_at_ms": updated - 60_000, "updated_at_ms": updated, "thread_source": "user",
            "preview": "hello", "recency_at": updated // 1000, "recency_at_ms": updated,
            "history_mode": "legacy"}
        excluded = rng.randrange(10)
        if excluded == 1:
            row["archived"] = 1
        elif excluded == 2:
            row["source"] = "exec"
        elif excluded == 3:
            row["memory_mode"] = "disabled"
        elif excluded == 4:
            row["updated_at_ms"] = NOW_MS - rng.randint(0, HOUR_MS - 1)
        elif excluded == 5:
            row["preview"] = ""
        rows.append(row)
    return rows


def insert(db: Path, table: str, rows: list[dict[str, object]]) -> None:
    con = sqlite3.connect(db)
    try:
        with con:
            columns = list(rows[0])
            con.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                            f"({', '.join('?' for _ in columns)})",
                            [tuple(r[c] for c in columns) for r in rows])
    finally:
        con.close()


def home_with_threads(directory: Path, count: int) -> Path:
    """A state DB of `count` threads (built once, reused)."""
    db = directory / f"threads-{count}" / "state_5.sqlite"
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        create_db(db, "state_5")
        insert(db, "threads", thread_rows(count))
    return db.parent


def home_with_outputs(directory: Path, count: int) -> Path:
    """A state DB of `count` enabled threads and a stage-1 output for each."""
    home = directory / f"outputs-{count}"
    if not (home / "memories_1.sqlite").exists():
        home.mkdir(parents=True, exist_ok=True)
        threads = thread_rows(count, seed=11)
        for row in threads:
            row.update(archived=0, source="cli", memory_mode="enabled", preview="hello")
        create_db(home / "state_5.sqlite", "state_5")
        insert(home / "state_5.sqlite", "threads", threads)
        rng = random.Random(5)
        create_db(home / "memories_1.sqlite", "memories_1")
        insert(home / "memories_1.sqlite", "stage1_outputs", [{
            "thread_id": t["id"], "source_updated_at": int(str(t["updated_at_ms"])) // 1000,
            "raw_memory": f"- memory {n}: " + "fact " * 40,
            "rollout_summary": f"# Summary {n}\n" + "detail " * 60, "rollout_slug": f"topic-{n}",
            "generated_at": NOW_MS // 1000, "usage_count": rng.choice((None, 0, 1, 3, 9)),
            "last_usage": None if rng.random() < 0.5 else NOW_MS // 1000 - rng.randint(0, 40)
            * 86_400, "selected_for_phase2": 0, "selected_for_phase2_source_updated_at": None}
            for n, t in enumerate(threads)])
    return home

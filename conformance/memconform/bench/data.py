"""Synthetic Codex homes at scale, in Codex's schema: thread rows of mixed eligibility and
stage-1 outputs, written in bulk."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from memconform.clock import FIXED_EPOCH_MS as NOW_MS
from memconform.home import HOUR_MS, create_db, insert_rows, thread_row, uuid7


def thread_rows(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """`count` threads; about half eligible, the rest excluded by one filter each."""
    rng = random.Random(seed)
    rows = []
    for number in range(count):
        updated = NOW_MS - rng.randint(2 * HOUR_MS, 9 * 24 * HOUR_MS)
        created = updated - 60_000
        spec: dict[str, Any] = {}
        excluded = rng.randrange(10)
        if excluded == 1:
            spec["archived"] = True
        elif excluded == 2:
            spec["source"] = "exec"
        elif excluded == 3:
            spec["memory_mode"] = "disabled"
        elif excluded == 4:
            updated = NOW_MS - rng.randint(0, HOUR_MS - 1)
        elif excluded == 5:
            spec["preview"] = ""
        rows.append(thread_row(uuid7(rng, created), f"/bench/rollout-{number}.jsonl", "/bench",
                               created, updated, **spec))
    return rows


def home_with_threads(directory: Path, count: int) -> Path:
    """A state DB of `count` threads (built once, reused)."""
    db = directory / f"threads-{count}" / "state_5.sqlite"
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        create_db(db, "state_5")
        insert_rows(db, "threads", thread_rows(count))
    return db.parent


def home_with_outputs(directory: Path, count: int) -> Path:
    """A state DB of `count` enabled threads and a stage-1 output for each."""
    home = directory / f"outputs-{count}"
    if not (home / "memories_1.sqlite").exists():
        home.mkdir(parents=True, exist_ok=True)
        threads = [thread_row(row["id"], row["rollout_path"], row["cwd"], row["created_at_ms"],
                              row["updated_at_ms"]) for row in thread_rows(count, seed=11)]
        create_db(home / "state_5.sqlite", "state_5")
        insert_rows(home / "state_5.sqlite", "threads", threads)
        rng = random.Random(5)
        create_db(home / "memories_1.sqlite", "memories_1")
        insert_rows(home / "memories_1.sqlite", "stage1_outputs", [{
            "thread_id": t["id"], "source_updated_at": t["updated_at_ms"] // 1000,
            "raw_memory": f"- memory {n}: " + "fact " * 40,
            "rollout_summary": f"# Summary {n}\n" + "detail " * 60, "rollout_slug": f"topic-{n}",
            "generated_at": NOW_MS // 1000, "usage_count": rng.choice((None, 0, 1, 3, 9)),
            "last_usage": None if rng.random() < 0.5 else NOW_MS // 1000 - rng.randint(0, 40)
            * 86_400, "selected_for_phase2": 0, "selected_for_phase2_source_updated_at": None}
            for n, t in enumerate(threads)])
    return home

"""One measured operation per process: `python -m memconform.bench.probes NAME ARGS_JSON`
prints `{"seconds": …, …}`. Set-up (building data) happens before the clock starts."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform.bench.data import home_with_outputs, home_with_threads
from memconform.clock import FIXED_EPOCH_MS as NOW_MS


def _clock(operation: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = operation()
    return time.perf_counter() - started, value


def scan(work: str, threads: int) -> dict[str, Any]:
    from memref import candidates, store

    home = home_with_threads(Path(work), threads)
    con = store.open_state_db(home)
    assert con is not None
    seconds, found = _clock(lambda: candidates.scan(
        con, now_ms=NOW_MS, current_thread_id="none", max_age_days=10, min_idle_hours=1))
    return {"seconds": seconds, "candidates": len(found)}


def select(work: str, outputs: int, limit: int) -> dict[str, Any]:
    from memref import materialize, selection, store

    home = home_with_outputs(Path(work), outputs)
    memories, state = store.connect(home / "memories_1.sqlite"), store.open_state_db(home)
    assert state is not None
    seconds, chosen = _clock(lambda: selection.select(
        memories, state, limit=limit, max_unused_days=30, now=NOW_MS // 1000))
    root = Path(tempfile.mkdtemp(prefix="memconform-bench-root-"))
    try:
        written, _ = _clock(lambda: materialize.sync_inputs(root, chosen))
        files = {path.relative_to(root): path.read_text(encoding="utf-8")
                 for path in root.rglob("*.md")}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bare = _bare_writes(files)
    return {"seconds": seconds, "materialize_seconds": written, "selected": len(chosen),
            "bare_loop_seconds": bare, "files": len(files)}


def _bare_writes(files: dict[Path, str]) -> float:
    """The anchor: a plain loop writing the same files (same names and texts, one `open` and
    `write` each, nothing atomic) into a fresh folder on the same disk."""
    root = Path(tempfile.mkdtemp(prefix="memconform-bench-bare-"))
    try:
        for folder in {path.parent for path in files}:
            (root / folder).mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        for path, text in files.items():
            with open(root / path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return time.perf_counter() - started
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _gate() -> None:
    """Tell the runner this process is set up, and wait for its word to start, so racing
    processes start together and interpreter start-up stays off the clock."""
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("the runner did not say go")


def claims(work: str, home: str, threads: list[str], worker: str) -> dict[str, Any]:
    """Claim and finish every thread of the shared pool that is still free; the ids this
    process finished, so double commits can be counted across processes."""
    from memref import jobs, store

    con = store.open_memories_db(Path(home))
    now = NOW_MS // 1000
    finished: list[str] = []
    _gate()

    def loop() -> None:
        for number, thread in enumerate(threads):
            claim = jobs.claim_stage1(con, thread, 100, worker=worker,
                                      token=f"{worker}-{number}", now=now, max_running=64)
            if claim.outcome is jobs.Claim.CLAIMED and claim.token and \
                    jobs.succeeded_no_output(con, thread, claim.token, now=now):
                finished.append(thread)

    seconds, _ = _clock(loop)
    return {"seconds": seconds, "finished": finished}


def bare(work: str, home: str, cycles: int) -> dict[str, Any]:
    """The physical limit on the claims' own file. A claim and its finish are two write
    transactions by design (the model call sits between them), so one cycle here is two
    BEGIN IMMEDIATE, one UPDATE, COMMIT rounds."""
    con = sqlite3.connect(Path(home) / "memories_1.sqlite", timeout=30, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    _gate()

    def loop() -> None:
        for _ in range(cycles * 2):
            con.execute("BEGIN IMMEDIATE")
            con.execute("UPDATE bench_counter SET n = n + 1")
            con.execute("COMMIT")

    seconds, _ = _clock(loop)
    return {"seconds": seconds, "cycles": cycles}


def read_path(work: str, operation: str) -> dict[str, Any]:
    from memref import citations
    from memref.config import CodexConfig, MemoriesConfig
    from memref.injection import developer_fragments
    from memref.tools import calls

    base = Path(work) / "read-path"
    root = base / "memories"
    if not (base / "ready").exists():
        (root / "rollout_summaries").mkdir(parents=True, exist_ok=True)
        (root / "memory_summary.md").write_text("v1\n" + "summary line\n" * 2_000)
        line = "an ordinary line of remembered text, nothing to find here\n"
        for number in range(200):  # 200 files x 50 KB = 10 MB
            body = line * 850 + ("the needle is here\n" if number % 10 == 0 else "")
            (root / "rollout_summaries" / f"s{number:03d}.md").write_text(body)
        (base / "ready").write_text("")
    config = CodexConfig(feature_memories=True, memories=MemoriesConfig(dedicated_tools=True))
    message = ("word " * 200_000)[:1_000_000] + (
        "<oai-mem-citation><citation_entries>\nMEMORY.md:1-2|note=[n]\n</citation_entries>"
        "<rollout_ids>\n0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000\n</rollout_ids></oai-mem-citation>")
    operations: dict[str, Callable[[], Any]] = {
        "instructions": lambda: developer_fragments(base, config),
        "citations": lambda: citations.parse_citation(citations.strip_citations(message)[1]),
        "search": lambda: calls.call(config, root, "search", json.dumps(
            {"queries": ["needle"]})),
    }
    seconds, value = _clock(operations[operation])
    extra = {"matches": len(value["output"]["matches"])} if operation == "search" else {}
    return {"seconds": seconds, **extra}


def long_line(work: str, megabytes: int, secrets: bool) -> dict[str, Any]:
    """Phase-1 input (load, filter, serialize, redact, truncate) of a rollout whose one
    message line is `megabytes` MB of log text; with `secrets`, every 1 KB carries three
    secret shapes, so every redaction pattern scans the whole text."""
    from memref.rollout_input import load_items, render

    chunk = "the build log line reads ok, nothing to see here; " * 20
    if secrets:
        chunk += " token=abcdefgh12345678 Bearer abcdefghijklmnopqr sk-" + "A" * 24
    text = (chunk + "\n") * (megabytes * 1_000_000 // (len(chunk) + 1))
    path = Path(work) / f"long-line-{megabytes}-{int(secrets)}.jsonl"
    if not path.exists():
        item = {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]}
        path.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00.000Z",
                                    "type": "response_item", "payload": item}) + "\n")
    seconds, value = _clock(lambda: render(load_items(path), None))
    return {"seconds": seconds, "input MB": round(path.stat().st_size / 1e6, 1),
            "output chars": len(value)}


PROBES: dict[str, Callable[..., dict[str, Any]]] = {
    "scan": scan, "select": select, "claims": claims, "bare": bare, "read-path": read_path,
    "long-line": long_line}


def main() -> int:
    name, args = sys.argv[1], json.loads(sys.argv[2])
    os.environ.setdefault("PYTHONHASHSEED", "0")
    print(json.dumps(PROBES[name](**args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

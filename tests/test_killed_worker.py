"""A worker killed mid-extraction leaves a leased job that a later session re-claims."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from memconform import mockmodel as mm
from memconform.adapters import AdapterError, resolve
from memconform.adapters.stdio import StdioTransport
from memconform.clock import FIXED_EPOCH_MS
from memconform.home import HOUR_MS, CodexHome

STDIO_REF = f"exec:{sys.executable} -m memref.stdio"
VALID = {"raw_memory": "r", "rollout_summary": "s", "rollout_slug": None}


def startup(home: CodexHome, now_ms: int, seed: int) -> dict[str, object]:
    return {"home": str(home.path), "now_ms": now_ms, "seed": seed,
            "session": {"source": "cli", "ephemeral": False, "subagent": False,
                        "resume_thread_id": None},
            "env": home.env, "timeout_s": 30}


def test_killed_worker_job_is_reclaimed_after_its_lease(tmp_path: Path) -> None:
    server = mm.start_server()
    try:
        mock = mm.MockModel(server)
        home = CodexHome(tmp_path / "home", now_ms=FIXED_EPOCH_MS, model_base_url=mock.base_url)
        home.write_config(memories={"min_rollout_idle_hours": 1})
        thread = home.add_thread(updated_ago_ms=2 * HOUR_MS)
        gate = mm.Gate(timeout_s=20)
        mock.on("stage1", mm.json_output(VALID).held(gate), repeat_last=False)
        mock.on("stage1", mm.json_output(VALID))
        victim = resolve(STDIO_REF, timeout_s=30)
        errors: list[AdapterError] = []

        def run_victim() -> None:
            try:
                victim.call("startup", startup(home, FIXED_EPOCH_MS, 1))
            except AdapterError as exc:
                errors.append(exc)

        worker = threading.Thread(target=run_victim)
        worker.start()
        deadline = time.monotonic() + 20
        while not mock.of_kind("stage1") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mock.of_kind("stage1"), "the victim never sent its stage-1 request"
        assert isinstance(victim.transport, StdioTransport)
        victim.transport.proc.kill()
        worker.join(timeout=20)
        gate.release()
        assert errors and errors[0].kind == "crash"
        victim.close()
        [row] = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
        assert row["status"] == "running" and row["lease_until"] == FIXED_EPOCH_MS // 1000 + 3600

        survivor = resolve(STDIO_REF, timeout_s=30)
        try:
            survivor.call("startup", startup(home, FIXED_EPOCH_MS + 60_000, 2))
            assert len(mock.of_kind("stage1")) == 1, "a live lease was taken over"
            survivor.call("startup", startup(home, FIXED_EPOCH_MS + 3601_000, 3))
        finally:
            survivor.close()
        assert len(mock.of_kind("stage1")) == 2
        [row] = home.query(home.memories_db, "SELECT * FROM jobs WHERE kind = 'memory_stage1'")
        assert row["status"] == "done" and row["ownership_token"]
        [out] = home.query(home.memories_db, "SELECT thread_id FROM stage1_outputs")
        assert out["thread_id"] == thread.id
    finally:
        server.clear()
        server.stop()

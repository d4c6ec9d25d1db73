"""The reference beside the real Codex binary: one startup each on identical seeded homes
(N eligible threads, an instant mock model), paired run by run."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memconform.bench.runner import Result
from memconform.checks.stage1 import VALID_OUTPUT
from memconform.cli import bytecode_env
from memconform.codex import session
from memconform.codex.adapter import CodexAdapter
from memconform.codex.binary import CodexBinaryError, work_dir
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, json_output, message, start_server

HOUR_MS = 3_600_000
STARTUP_TARGET_S = 0.15  # `memref startup`, one eligible thread, the whole process
MEMREF = [sys.executable, "-c", "from memref.cli import main; main()"]
# the standard-library modules (dotted names) loaded once `memref.cli` is imported, the
# interpreter's own start-up modules included
_STDLIB_OF_MEMREF = ("import sys; import memref.cli; print(' '.join(sorted(m for m in "
                     "sys.modules if m.partition('.')[0] in sys.stdlib_module_names)))")


def python_floor(env: dict[str, str]) -> list[str]:
    """The command of a process that imports the standard-library modules that importing
    `memref.cli` loads and does nothing else (a startup also loads a few for its HTTP
    request): what those imports cost before any memref code runs."""
    names = subprocess.run([sys.executable, "-c", _STDLIB_OF_MEMREF], env=env, check=True,
                           capture_output=True, text=True, timeout=120).stdout.split()
    return [sys.executable, "-c", "import " + ", ".join(names)]


def seeded(path: Path, base_url: str, threads: int) -> CodexHome:
    """The same home every time: fixed clock offset and seed give the same thread ids."""
    shutil.rmtree(path, ignore_errors=True)
    home = CodexHome(path, now_ms=int(time.time() * 1000), model_base_url=base_url, seed=42)
    home.write_config(memories={"min_rollout_idle_hours": 1, "max_rollouts_per_startup": 128})
    home.add_threads(threads, updated_ago_ms=2 * HOUR_MS)
    return home


def beside_codex(work: Path, sizes: list[int], runs: int) -> tuple[list[Result], str]:
    try:
        adapter = CodexAdapter()
        adapter.handle({"seq": 0, "op": "start", "args": {}})
        adapter.binary  # noqa: B018 - locate (or install) it now
    except CodexBinaryError as exc:
        return [], f"reference beside Codex: not run ({exc})"
    server = start_server()
    mock = MockModel(server)
    mock.on("stage1", json_output(VALID_OUTPUT))
    mock.on("consolidation", message("Memory is up to date."))
    results = []
    homes = work_dir() / "bench"  # Codex refuses /tmp
    # bytecode as an installed memref has it, compiled by one untimed run (an editable install
    # under PYTHONDONTWRITEBYTECODE would compile every module at every start)
    memref_env = bytecode_env()
    subprocess.run([*MEMREF, "--help"], env=memref_env, capture_output=True, timeout=120,
                   check=False)
    floor = python_floor(memref_env)
    # a release that logs its pipeline's end settles on it; otherwise on a quiet window
    waited_s = 0.0 if adapter.release.pipeline_end else session.QUIET_S
    try:
        for size in sizes:
            ours, theirs, floors = [], [], []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(floor, env=memref_env, check=True, timeout=120)
                floors.append(time.perf_counter() - started)
                home = seeded(homes / f"ref-{size}", mock.base_url, size)
                started = time.perf_counter()
                done = subprocess.run([*MEMREF, "startup", "--home", str(home.path)],
                                      env={**memref_env, **home.env},
                                      capture_output=True, text=True, timeout=600, check=False)
                ours.append(time.perf_counter() - started)
                if done.returncode != 0:
                    raise RuntimeError(f"memref startup failed: {done.stderr[-1500:]}")
                home = seeded(homes / f"codex-{size}", mock.base_url, size)
                started = time.perf_counter()
                reply = adapter.handle({"seq": 1, "op": "startup", "args": {
                    "home": str(home.path), "now_ms": None, "seed": 0, "env": home.env,
                    "timeout_s": 600, "session": {"source": "cli", "ephemeral": False,
                                                  "subagent": False}}})
                theirs.append(time.perf_counter() - started - waited_s)
                if not reply["ok"]:
                    raise RuntimeError(f"codex startup failed: {reply['error']}")
            ratios = [t / o for o, t in zip(ours, theirs, strict=True)]
            extra: dict[str, Any] = {"codex_median_s": round(statistics.median(theirs), 2),
                                     "codex_over_reference": round(statistics.median(ratios), 2),
                                     "stdlib_imports_only_s": round(statistics.median(floors), 3)}
            results.append(Result(f"startup, {size} eligible thread(s): memref", "s", ours,
                                  extra, target=STARTUP_TARGET_S if size == 1 else None))
    finally:
        adapter.handle({"seq": 2, "op": "stop", "args": {}})
        server.clear()
        server.stop()
    how = (f"minus the {waited_s:g} s quiet window the adapter waits to know the pipeline is "
           "over" if waited_s else "held until Codex logs its pipeline's end (nothing "
           "subtracted)")
    off = ", ".join(adapter.release.off_features)
    note = (f"Codex times are `codex exec` sessions driven by the memconform adapter, {how}"
            + (f", with the features no memory step uses off ({off})" if off else "")
            + "; the reference runs `memref startup` as a whole process; "
            + "`stdlib_imports_only_s` is a process that imports the standard-library modules "
            + "that importing `memref.cli` loads and does nothing else.")
    return results, note

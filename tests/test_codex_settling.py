"""When a held Codex session counts as settled: the release's end marker on stderr ends the
wait at once, unless a job the session claimed is still running or a request is in flight."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from memconform.codex import session
from memconform.codex.front import Front, Turn

MARKER = 'instrument_name="codex.memory.phase2.e2e_ms"'


class StubFront:
    def __init__(self, quiet: float) -> None:
        self.quiet = quiet

    def quiet_for(self) -> float:
        return self.quiet


def _home(tmp_path: Path, status: str) -> Path:
    """A memories DB holding the global job in `status`, owned by an earlier token."""
    con = sqlite3.connect(tmp_path / "memories_1.sqlite")
    con.execute("CREATE TABLE jobs (kind TEXT, job_key TEXT, status TEXT, ownership_token TEXT,"
                " finished_at INTEGER, retry_at INTEGER)")
    con.execute("INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', ?, 'old', "
                "NULL, NULL)", (status,))
    con.commit()
    con.close()
    return tmp_path


def _claim(home: Path) -> None:
    with sqlite3.connect(home / "memories_1.sqlite") as con:
        con.execute("UPDATE jobs SET status = 'running', ownership_token = 'new'")


@pytest.fixture
def idle() -> Iterator[int]:
    """The session process the watches follow: one that does nothing."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _watch(home: Path, pid: int, quiet: float, stderr: bytes,
           marker: str | None = MARKER) -> tuple[session.Settling, Path]:
    """A watch on `home` whose session, process `pid`, has written `stderr` so far (appended
    to via the path)."""
    watch = session.Settling(home, StubFront(quiet), marker)  # type: ignore[arg-type]
    log = home / f"stderr-{id(watch)}.log"
    log.write_bytes(stderr)
    fd = os.open(log, os.O_RDONLY)
    weakref.finalize(watch, os.close, fd)
    watch.follow(pid, fd)
    return watch, log


LINE = f"2026-12-07T11:52:56Z DEBUG opentelemetry_sdk: name=\"x\" {MARKER} c=1\n".encode()


def test_the_end_marker_settles_at_once(tmp_path: Path, idle: int) -> None:
    home = _home(tmp_path, "done")
    assert _watch(home, idle, quiet=0.2, stderr=b"noise\n" + LINE)[0].over()
    assert not _watch(home, idle, quiet=0.2, stderr=b"noise\n")[0].over()


def test_without_a_marker_the_quiet_window_decides(tmp_path: Path, idle: int) -> None:
    home = _home(tmp_path, "done")
    assert not _watch(home, idle, quiet=0.2, stderr=LINE, marker=None)[0].over()
    watch, _ = _watch(home, idle, quiet=session.QUIET_S + 0.1, stderr=b"", marker=None)
    assert not watch.over()  # the job rows were read just now
    watch.changed_at -= session.QUIET_S
    assert watch.over()


def test_a_request_in_flight_holds_the_session(tmp_path: Path, idle: int) -> None:
    assert not _watch(_home(tmp_path, "done"), idle, quiet=0.0, stderr=LINE)[0].over()


def test_a_job_the_session_claimed_holds_it_until_final(tmp_path: Path, idle: int) -> None:
    home = _home(tmp_path, "pending")
    watch, _ = _watch(home, idle, quiet=0.5, stderr=LINE)
    _claim(home)
    assert not watch.over()
    with sqlite3.connect(home / "memories_1.sqlite") as con:
        con.execute("UPDATE jobs SET status = 'done'")
    assert watch.over()


def test_file_work_in_the_memory_root_keeps_a_claimed_job_holding(tmp_path: Path,
                                                                  idle: int) -> None:
    """A consolidation writing thousands of summaries (or git storing them) makes no request
    and no job change for many seconds: that is not a job a check took over."""
    home = _home(tmp_path, "pending")
    summaries = home / "memories" / "rollout_summaries"
    summaries.mkdir(parents=True)
    watch, _ = _watch(home, idle, quiet=session.STUCK_S + 1, stderr=b"")
    _claim(home)
    assert not watch.over()
    watch.changed_at -= session.STUCK_S  # quiet for the whole window ...
    (summaries / "a.md").write_text("x")
    os.utime(summaries, ns=(1, 1))  # ... but the folder changed (whatever its clock says)
    assert not watch.over()
    watch.changed_at -= session.STUCK_S  # as long again without any work: taken over
    assert watch.over()



BUSY = "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end:\n    pass\n"


def test_cpu_work_in_the_session_keeps_a_claimed_job_holding(tmp_path: Path, idle: int) -> None:
    """Codex computes for many seconds with no request, row or file change (4,097 outputs
    between the baseline and the first summary); the work may be a child's (git)."""
    home = _home(tmp_path, "pending")
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0"; :', BUSY],
                             start_new_session=True)
    try:
        watch, _ = _watch(home, shell.pid, quiet=session.STUCK_S + 1, stderr=b"")
        _claim(home)
        assert not watch.over()
        watch.changed_at -= session.STUCK_S  # no request, row or file change all along ...
        time.sleep(session.CPU_WINDOW_S + 0.1)
        assert not watch.over(), "a window of the busy grandchild's CPU time is not seen"
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    watch.changed_at -= session.STUCK_S  # as long again with the process gone: taken over
    watch.cpu_at -= session.CPU_WINDOW_S
    assert watch.over()


def test_a_little_cpu_time_is_not_work(tmp_path: Path, idle: int) -> None:
    """A session waiting on a job a check took over still uses a few percent of a core."""
    home = _home(tmp_path, "pending")
    watch, _ = _watch(home, idle, quiet=session.STUCK_S + 1, stderr=b"")
    _claim(home)
    assert not watch.over()
    watch.changed_at -= session.STUCK_S
    watch.cpu_at -= session.CPU_WINDOW_S  # a whole window over ...
    watch.cpu -= session.CPU_BUSY * session.CPU_WINDOW_S * 0.9  # ... with 90 % of the share
    assert watch.over()


AT = LINE.index(MARKER.encode())


@pytest.mark.parametrize("split", [AT + 1, AT + len(MARKER) // 2, AT + len(MARKER) - 1])
def test_a_marker_written_in_two_pieces_is_found(tmp_path: Path, idle: int, split: int) -> None:
    watch, log = _watch(_home(tmp_path, "done"), idle, quiet=0.2, stderr=LINE[:split])
    assert not watch.over()
    with log.open("ab") as more:
        more.write(LINE[split:])
    assert watch.over()


FAKE_CODEX = """#!/bin/sh
printf '{"type": "env", "rust_log": "%s"}\\n' "$RUST_LOG"
printf '%s' "$MARKER_LINE" >&2
echo "Error: something the porter needs to read" >&2
"""


def test_a_held_session_asks_for_the_marker_and_keeps_it_out_of_stderr(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "codex"
    fake.write_text(FAKE_CODEX, encoding="utf-8")
    fake.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        'model_provider = "mock"\n[model_providers.mock]\nbase_url = "http://127.0.0.1:9/v1"\n',
        encoding="utf-8")
    monkeypatch.setenv("MARKER_LINE", LINE.decode())
    monkeypatch.setenv("RUST_LOG", "codex_memories_write=debug")
    front = Front()
    try:
        result = session.run(fake, front, home, env={}, args=[], turn=Turn([[]]), hold=True,
                             timeout_s=20, end_marker=MARKER)
    finally:
        front.close()
    assert result.events == [{"type": "env", "rust_log":
                              f"codex_memories_write=debug,{session.END_MARKER_LOG}"}]
    assert result.stderr == "Error: something the porter needs to read\n"

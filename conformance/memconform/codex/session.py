"""One `codex exec` session on a Codex home, pointed at the front, with its turn scripted and,
for a startup, held until the memory pipeline it started has settled."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.codex.front import Front, Turn

QUIET_S = 1.5  # no pipeline request and no job change for this long: nothing more will come
STUCK_S = 10.0
# the session's processes work when they use this share of one core over a window: Codex
# computes for many seconds with no request, row or file change (17 s of one core between the
# baseline and the first summary of 4,097 outputs, still ~40 % of one on loaded cores), while
# a session waiting on a job a check took over used up to 4 % under `-n 4` on two cores
CPU_BUSY = 0.15
CPU_WINDOW_S = 2.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
POLL_S = 0.1
TOOL_OUTPUT_TOKENS = 10_000_000  # Codex cuts tool output at ~10 KB otherwise
END_MARKER_LOGGER = "opentelemetry_sdk"  # logs each metric instrument as it is created
END_MARKER_LOG = f"{END_MARKER_LOGGER}=debug"  # the RUST_LOG directive that shows them
START_RETRIES = 3  # fresh processes racing on one home may fail to open the state DB


class CodexSessionError(RuntimeError):
    """The session did not start, finish or settle."""


@dataclass
class Result:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    turn: Turn

    @property
    def thread_id(self) -> str | None:
        return next((e.get("thread_id") for e in self.events
                     if e.get("type") == "thread.started"), None)

    def agent_messages(self) -> list[str]:
        return [e["item"].get("text", "") for e in self.events
                if e.get("type") == "item.completed"
                and (e.get("item") or {}).get("type") == "agent_message"]


@dataclass(frozen=True)
class Provider:
    """The model provider `config.toml` names: the harness's mock."""

    name: str
    base_url: str
    env_key: str | None


def provider_of(home: Path) -> Provider:
    try:
        data = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
        name = data["model_provider"]
        table = data["model_providers"][name]
        key = table.get("env_key")
        return Provider(name, table["base_url"], key if isinstance(key, str) else None)
    except (OSError, KeyError, TypeError, AttributeError, tomllib.TOMLDecodeError) as exc:
        raise CodexSessionError(f"{home}/config.toml names no usable model provider: "
                                f"{exc}") from exc


def memories_table(home: Path) -> dict[str, Any]:
    """The `[memories]` table of the home's `config.toml` (empty when absent or unreadable)."""
    try:
        data = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("memories")
    return table if isinstance(table, dict) else {}


MEMORIES_DBS = ("memories_1.sqlite", "memories_v2_1.sqlite")  # layouts v1 and v2
MEMORY_ROOTS = ("memories", "memories_v2")
# where a consolidation's file work shows: the sync's files, git's index and objects
ROOT_WORK = ("", "rollout_summaries", ".git", ".git/objects")


def root_work(home: Path) -> tuple[int, ...]:
    """The modification times of the folders a consolidation writes in (the memory roots,
    their summaries, git's metadata and object folders): they move while Codex writes
    thousands of summary files or git stores them, with no request and no job change."""
    stamps = []
    for root in MEMORY_ROOTS:
        for rel in ROOT_WORK:
            folder = home / root / rel
            with contextlib.suppress(OSError):
                stamps.append(folder.stat().st_mtime_ns)
        with contextlib.suppress(OSError):
            stamps += (entry.stat().st_mtime_ns
                       for entry in os.scandir(home / root / ".git" / "objects"))
    return tuple(stamps)


def cpu_seconds(pid: int) -> float:
    """CPU time of process `pid` and its live descendants, with their reaped children's (0
    once the process is gone)."""
    ticks, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
            for task in os.scandir(f"/proc/{current}/task"):
                stack += (int(child) for child in
                          Path(task.path, "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return ticks / CLOCK_TICKS


def jobs(home: Path) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    """The `jobs` rows of both layouts' memories DBs as they stand, keyed by (DB file, kind,
    job key); a DB not created or not migrated yet has none."""
    found: dict[tuple[str, str, str], tuple[Any, ...]] = {}
    for name in MEMORIES_DBS:
        path = home / name
        if not path.exists():
            continue
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
            try:
                rows = con.execute("SELECT kind, job_key, status, ownership_token, "
                                   "finished_at, retry_at FROM jobs").fetchall()
            finally:
                con.close()
        except sqlite3.OperationalError:  # created but not migrated yet
            continue
        found.update({(name, r[0], r[1]): tuple(r[2:]) for r in rows})
    return found


class Settling:
    """Watches one session's pipeline. It is over at once when the release's end marker (the
    line its last pipeline step logs) is on stderr, no pipeline request is in flight and no
    job it claimed is still running. Without the marker (a guard stopped the pipeline before
    it began, or the release has none) it is over when no request is in flight, no other
    sign of work (a row change, file work in a memory root, `CPU_BUSY` of a core used by the
    session's processes) has shown for `QUIET_S` and no job it claimed is still running. A
    claimed job that stays `running` for `STUCK_S` with no request and no such sign is not this
    session's any more (a check took it over) and does not hold the session."""

    def __init__(self, home: Path, front: Front, end_marker: str | None = None) -> None:
        self.home = home
        self.front = front
        self.before = jobs(home)
        self.seen = self.before
        self.work = root_work(home)
        self.changed_at = time.monotonic()
        self.marker = end_marker.encode() if end_marker else None
        self.ended = False
        self._stderr: int | None = None
        self._read = 0
        self._pid: int | None = None
        self.cpu, self.cpu_at = 0.0, time.monotonic()

    def follow(self, pid: int, stderr_fd: int) -> None:
        """Watch the session's process `pid` for CPU work and its stderr (a file) for the end
        marker."""
        self._pid, self._stderr, self._read = pid, stderr_fd, 0
        self.cpu, self.cpu_at = cpu_seconds(pid), time.monotonic()

    def _computing(self) -> bool:
        """Whether the session's processes used `CPU_BUSY` of a core over the window that
        has just ended (false while it runs)."""
        now = time.monotonic()
        if self._pid is None or now - self.cpu_at < CPU_WINDOW_S:
            return False
        cpu = cpu_seconds(self._pid)
        busy = cpu - self.cpu >= CPU_BUSY * (now - self.cpu_at)
        self.cpu, self.cpu_at = cpu, now
        return busy

    def _marker_seen(self) -> bool:
        if self.ended or self.marker is None or self._stderr is None:
            return self.ended
        start = max(self._read - len(self.marker), 0)
        chunk = os.pread(self._stderr, 1 << 20, start)
        self._read = start + len(chunk)
        self.ended = self.marker in chunk
        return self.ended

    def over(self) -> bool:
        now, work, computing = jobs(self.home), root_work(self.home), self._computing()
        if now != self.seen or work != self.work or computing:
            self.seen, self.work, self.changed_at = now, work, time.monotonic()
        claimed = any(row[0] == "running" and row[1] != self.before.get(key, (None, None))[1]
                      for key, row in now.items())
        in_flight = self.front.quiet_for() == 0.0
        if not claimed and not in_flight and self._marker_seen():
            return True
        quiet = min(self.front.quiet_for(), time.monotonic() - self.changed_at)
        return quiet >= (STUCK_S if claimed else QUIET_S)


def run(binary: Path, front: Front, home: Path, *, env: dict[str, str], args: list[str],
        turn: Turn, hold: bool, timeout_s: float, end_marker: str | None = None) -> Result:
    """Run `codex exec ARGS` on `home`. With `hold`, the session's first model answer waits
    until the pipeline has settled (the session would otherwise exit and kill it);
    `end_marker` is what the release logs on stderr when its pipeline has finished."""
    provider = provider_of(home)
    cwd = home.parent / f"{home.name}-work"
    cwd.mkdir(parents=True, exist_ok=True)
    command = [str(binary), "exec", "--skip-git-repo-check", "--json",
               "-c", f"model_providers.{provider.name}.base_url={json.dumps(front.url)}",
               "-c", f"tool_output_token_limit={TOOL_OUTPUT_TOKENS}", *args]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if provider.env_key:  # the front needs no key, but Codex wants the variable set
        environment[provider.env_key] = "memconform-placeholder"
    environment.update(env, CODEX_HOME=str(home))
    if hold and end_marker:
        environment["RUST_LOG"] = ",".join(filter(None, (
            environment.get("RUST_LOG") or "error", END_MARKER_LOG)))
    for attempt in range(START_RETRIES):
        result = _once(command, cwd, environment, front, home, provider.base_url, turn, hold,
                       timeout_s, end_marker)
        if result.returncode == 0 or "failed to initialize" not in result.stderr:
            return result
        turn = Turn(turn.answers, gate_timeout_s=turn.gate_timeout_s)
        time.sleep(0.2 * (attempt + 1))
    raise CodexSessionError(f"codex exec failed to start {START_RETRIES} times: "
                            f"{result.stderr[-1500:]}")


def _once(command: list[str], cwd: Path, env: dict[str, str], front: Front, home: Path,
          upstream: str, turn: Turn, hold: bool, timeout_s: float,
          end_marker: str | None) -> Result:
    watch = Settling(home, front, end_marker)
    if not hold:
        turn.gate.set()
    front.begin(upstream, turn)
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)
        watch.follow(proc.pid, err.fileno())
        try:
            if hold:
                _hold_until_settled(proc, watch, turn, deadline)
                turn.gate.set()
            proc.wait(max(deadline - time.monotonic(), 1.0))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise CodexSessionError(f"codex exec did not finish within {timeout_s:.0f} s") \
                from None
        finally:
            turn.gate.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        err.seek(0)
        # JSON lines end at LF only: a message may hold U+2028 or U+0085 unescaped
        events = [json.loads(line) for line in out.read().decode("utf-8", "replace").split("\n")
                  if line.startswith("{")]
        stderr = "".join(line for line in err.read().decode("utf-8", "replace")
                         .splitlines(keepends=True) if END_MARKER_LOGGER not in line)
        return Result(proc.returncode, events, stderr, turn)


def _hold_until_settled(proc: subprocess.Popen[bytes], watch: Settling, turn: Turn,
                        deadline: float) -> None:
    def wait(condition: Callable[[], bool], what: str) -> None:
        while not condition():
            if proc.poll() is not None:
                return
            if time.monotonic() > deadline:
                raise CodexSessionError(f"timed out waiting for {what}")
            time.sleep(POLL_S)

    wait(turn.arrived.is_set, "the session's first model request")
    arrived = time.monotonic()
    wait(lambda: watch.over() and (watch.ended or time.monotonic() - arrived >= QUIET_S),
         "the memory pipeline to settle")

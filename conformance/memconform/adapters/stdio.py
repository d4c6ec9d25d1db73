"""Stdio transport: a subprocess reading JSON lines on stdin and answering on stdout."""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import subprocess
import threading
from typing import IO

from memconform.adapters.base import AdapterError, Transport

STDERR_KEEP_LINES = 200
_EOF = object()


class StdioTransport(Transport):
    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.label = "exec:" + " ".join(argv)
        self._lines: queue.Queue[object] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_KEEP_LINES)
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        except OSError as exc:
            raise AdapterError("crash", f"{self.label}: cannot start: {exc}") from exc
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()

    def fresh(self) -> StdioTransport:
        return StdioTransport(self.argv)

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(_EOF)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self._stderr.append(line.rstrip("\n"))

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def exchange(self, line: str, timeout_s: float) -> str:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:  # broken pipe, or stdin already closed
            raise AdapterError("crash", f"{self.label}: stdin closed ({exc}); exit code "
                                        f"{self.proc.poll()}", self.stderr_tail()) from exc
        try:
            reply = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self.close()
            raise AdapterError("timeout", f"{self.label}: no response within {timeout_s:g} s",
                               self.stderr_tail()) from None
        if reply is _EOF:
            code = self.proc.wait(timeout=5)
            raise AdapterError("crash", f"{self.label}: exited with code {code} before answering",
                               self.stderr_tail())
        assert isinstance(reply, str)
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

"""`python -m memconform.warmpytest`: a pytest fork server for the selftest.

It imports pytest, the harness plugin and every check module once (through pytest's own
collection, assertion rewriting included), then serves runs one at a time: each line on stdin
is a JSON object {"args": [...], "log": PATH}; it forks, the child runs `pytest ARGS` with its
output in LOG, and the server answers the child's exit code on a line of stdout. A mutant
module imported by a run stays in that run's child."""

from __future__ import annotations

import json
import os
import sys
import traceback

import pytest

from memconform.listing import collect_checks

READY = "ready"


def _child(args: list[str], log: str) -> None:
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        code = int(pytest.main(args))
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # whatever happened, the child must not return into the server loop
        traceback.print_exc()
        sys.stderr.flush()
        code = 3
    os._exit(code)


def serve() -> None:
    collect_checks()  # imports every check module through pytest's collection
    print(READY, flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(job["args"], job["log"])
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    serve()

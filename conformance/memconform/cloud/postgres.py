"""A throwaway PostgreSQL cluster from the machine's server binaries (Debian's `postgresql`),
listening on a Unix socket only. As root, the server runs as the `postgres` user."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 60
PORT = 5432


class PostgresError(RuntimeError):
    """No PostgreSQL server binaries, or the cluster would not start."""


def _binary(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(
        f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise PostgresError(f"{name} not found: install Debian's postgresql package")
    return found


@dataclass
class Cluster:
    directory: Path
    user: str | None

    @property
    def url(self) -> str:
        return (f"postgresql+psycopg://memconform@/postgres?host={self.directory}"
                f"&port={PORT}")

    def _run(self, *argv: str) -> None:
        command = [*(["runuser", "-u", self.user, "--"] if self.user else []), *argv]
        done = subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S,
                              check=False, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise PostgresError(f"{' '.join(argv[:2])} failed: {done.stderr[-1500:]}")

    def stop(self) -> None:
        try:
            self._run(_binary("pg_ctl"), "-D", str(self.directory / "data"), "-m", "immediate",
                      "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


def start() -> Cluster:
    """initdb (trust auth, no fsync) and start; the caller stops it."""
    directory = Path(tempfile.mkdtemp(prefix="memconform-pg-"))
    user = None
    if os.geteuid() == 0:
        user = "postgres"
        try:
            entry = pwd.getpwnam(user)
        except KeyError as exc:
            raise PostgresError("running as root needs the `postgres` user") from exc
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    cluster = Cluster(directory, user)
    data = directory / "data"
    cluster._run(_binary("initdb"), "-D", str(data), "-A", "trust", "-U", "memconform",
                 "--no-sync", "-E", "UTF8")
    options = f"-k {directory} -c listen_addresses='' -p {PORT} -F"
    cluster._run(_binary("pg_ctl"), "-D", str(data), "-o", options, "-l",
                 str(directory / "server.log"), "-w", "-t", str(START_TIMEOUT_S), "start")
    return cluster

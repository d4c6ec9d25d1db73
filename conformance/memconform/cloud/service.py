"""Starting the cloud service under test: the bundled reference (or a mutant of it) as a
subprocess on SQLite or a throwaway PostgreSQL, or an already running service by URL."""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from memconform.cloud import postgres

START_TIMEOUT_S = 60
READY_POLL_S = 0.05
TOKEN_ENV = "MEMCONFORM_CLOUD_TOKEN"


class CloudSpecError(ValueError):
    """An `--impl` or `--cloud-db` value the cloud profile cannot use."""


@dataclass
class Service:
    base_url: str
    token: str
    process: subprocess.Popen[str] | None = None
    cluster: postgres.Cluster | None = None
    scratch: Path | None = None
    log: list[str] = field(default_factory=list)

    def check_alive(self) -> None:
        """Raise with the tail of its stderr if the service started here has exited."""
        if self.process is not None and self.process.poll() is not None:
            tail = "".join(self.log[-20:])
            raise RuntimeError(f"the cloud service exited with status {self.process.returncode}"
                               f"; its last stderr lines:\n{tail}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.cluster is not None:
            self.cluster.stop()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def db_label(db: str) -> str:
    """`--cloud-db` as a report may show it: a URL is cut to its scheme (it may hold a
    password)."""
    return db.split(":", 1)[0] if "://" in db else db


def validate(impl: str, db: str) -> tuple[str, str]:
    """Refuse an `--impl` / `--cloud-db` pair the profile cannot use, before anything starts;
    else `("url", base URL)` for a running service or `("module", module)` for one to start."""
    kind, _, rest = impl.partition(":")
    if impl.startswith(("http://", "https://")) or kind == "http":
        url = impl if impl.startswith(("http://", "https://")) else rest
        if not url.startswith(("http://", "https://")) or not os.environ.get(TOKEN_ENV):
            raise CloudSpecError(f"--impl {impl!r}: a running service needs its base URL "
                                 f"(http://HOST:PORT) and its conformance token in ${TOKEN_ENV}")
        return "url", url.rstrip("/")
    if impl != "ref" and not (kind == "serve" and rest):
        raise CloudSpecError(f"--impl {impl!r}: the cloud profile takes ref, serve:MODULE or "
                             "a service's http://HOST:PORT")
    if db not in ("sqlite", "postgresql") and "://" not in db:
        raise CloudSpecError(f"--cloud-db {db!r}: expected sqlite, postgresql or a URL")
    missing = missing_cloud_packages(postgres=db == "postgresql" or db.startswith("postgres"))
    if missing:
        raise CloudSpecError(f"the bundled cloud service needs {', '.join(missing)}: install "
                             f"the cloud extra (pip install 'memconform[cloud]')")
    return "module", "memref.cloud.serve" if impl == "ref" else rest


def missing_cloud_packages(*, postgres: bool = False) -> list[str]:
    """The packages of the `cloud` extra that this environment lacks."""
    wanted = ["fastapi", "uvicorn", "sqlalchemy", *(["psycopg"] if postgres else [])]
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def start(impl: str, db: str) -> Service:
    """`impl`: `ref`, `serve:MODULE` (a module run like `memref.cloud.serve`), or the base URL
    of a running service (`http://HOST:PORT`; its conformance token in
    $MEMCONFORM_CLOUD_TOKEN).
    `db` (bundled services only): `sqlite`, `postgresql`, or a SQLAlchemy URL."""
    kind, target = validate(impl, db)
    if kind == "url":
        return Service(target, os.environ[TOKEN_ENV])
    module = target
    cluster, scratch = None, Path(tempfile.mkdtemp(prefix="memconform-cloud-"))
    if db == "sqlite":
        url = f"sqlite:///{scratch / 'cloud.sqlite'}"
    elif db == "postgresql":
        try:
            cluster = postgres.start()
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        url = cluster.url
    else:
        url = db
    token = secrets.token_hex(16)
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--db", url, "--conformance-token", token],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    service = Service("", token, process, cluster, scratch)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(process.stdout.readline()
                                                          if process.stdout else ""))
    reader.start()
    reader.join(START_TIMEOUT_S)
    line = first[0].strip() if first else ""
    if not line.startswith("listening on "):
        service.stop()
        error = process.stderr.read() if process.stderr and process.poll() is not None else ""
        raise CloudSpecError(f"{module} did not start: {line or error[-1500:]}")
    service.base_url = line.removeprefix("listening on ")
    threading.Thread(target=_drain, args=(process, service.log), daemon=True).start()
    try:
        wait_ready(service, START_TIMEOUT_S)
    except BaseException:
        service.stop()
        raise
    return service


def wait_ready(service: Service, timeout_s: float) -> None:
    """Return once the service answers HTTP (any status: it is up); raise if it exits or
    stays silent for `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        service.check_alive()
        try:
            httpx.get(f"{service.base_url}/", timeout=max(0.1, deadline - time.monotonic()))
            return
        except httpx.TransportError as exc:
            if time.monotonic() >= deadline:
                raise CloudSpecError(f"the cloud service at {service.base_url} did not answer "
                                     f"within {timeout_s:.0f} s: {exc}") from exc
        time.sleep(READY_POLL_S)


def _drain(process: subprocess.Popen[str], log: list[str]) -> None:
    """Keep the service's stderr flowing; its last 200 lines explain a crash."""
    for line in process.stderr or ():
        log.append(line)
        del log[:-200]



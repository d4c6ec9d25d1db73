"""Finding (and on first use installing) a Codex binary of a release the harness knows."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from pathlib import Path

from memconform.codex import releases
from memconform.codex.releases import Release, ReleaseError

BIN_ENV = "MEMCONFORM_CODEX_BIN"
NPM_DIR_ENV = "MEMCONFORM_CODEX_NPM_DIR"
WORKDIR_ENV = "MEMCONFORM_CODEX_WORKDIR"
VENDORED = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
INSTALL_TIMEOUT_S = 300
INSTALL_ATTEMPTS = 3  # a registry that drops a large download mid-way usually serves it next time
INSTALL_BACKOFF_S = 15.0


class CodexBinaryError(RuntimeError):
    """The Codex binary cannot be found, installed or run."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memconform"


def work_dir() -> Path:
    """Where Codex homes live: never under /tmp (`MEMCONFORM_CODEX_WORKDIR` overrides)."""
    return Path(os.environ.get(WORKDIR_ENV) or cache_dir() / "work")


def npm_dir(version: str) -> Path:
    """One npm prefix per release (`MEMCONFORM_CODEX_NPM_DIR` moves the parent folder)."""
    return Path(os.environ.get(NPM_DIR_ENV) or cache_dir() / "codex-npm") / version


def install(release: Release, prefix: Path) -> Path:
    """`npm install @openai/codex@VERSION` into `prefix`; the Linux x64 build's binary."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise CodexBinaryError(f"the npm package ships a Linux x64 build; this is "
                               f"{platform.system()} {platform.machine()}: pass codex:PATH")
    npm = shutil.which("npm")
    if npm is None:
        raise CodexBinaryError("npm is not on PATH: install Node.js, or pass codex:PATH")
    prefix.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for attempt in range(INSTALL_ATTEMPTS):
        if attempt:
            time.sleep(INSTALL_BACKOFF_S * attempt)
        try:
            done = subprocess.run([npm, "install", "--loglevel=error", "--no-audit", "--no-fund",
                                   "--prefix", str(prefix), release.package],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                                  check=False)
        except subprocess.TimeoutExpired:
            failures.append(f"attempt {attempt + 1}: no answer within {INSTALL_TIMEOUT_S} s")
            continue
        if done.returncode == 0 and (prefix / VENDORED).is_file():
            return prefix / VENDORED
        said = (done.stderr.strip() or done.stdout.strip())[-1200:]
        failures.append(f"attempt {attempt + 1}: exit {done.returncode}: "
                        f"{said or 'npm printed nothing'}")
    raise CodexBinaryError(f"npm install {release.package} into {prefix} failed "
                           f"{INSTALL_ATTEMPTS} times:\n" + "\n".join(failures))


def locate(explicit: str | None, version: str | None = None) -> tuple[Path, Release]:
    """The binary and its release. `version` (from `codex@VERSION`): that release, installed
    into the user's cache on first use. Otherwise `codex:PATH`, else $MEMCONFORM_CODEX_BIN,
    else the default release from the cache. A binary must report a release the harness knows,
    and the one asked for when both a version and a path are given."""
    try:
        wanted = releases.get(version or releases.DEFAULT)
    except ReleaseError as exc:
        raise CodexBinaryError(str(exc)) from None
    configured = explicit or (None if version else os.environ.get(BIN_ENV))
    path = Path(configured) if configured else npm_dir(wanted.version) / VENDORED
    if not configured and not path.is_file():
        path = install(wanted, npm_dir(wanted.version))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise CodexBinaryError(f"{path}: not an executable file")
    try:
        reported = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                                  timeout=30, check=False).stdout.strip()
    except OSError as exc:
        raise CodexBinaryError(f"{path}: cannot run: {exc}") from exc
    try:
        release = releases.from_reported(reported)
    except ReleaseError as exc:
        raise CodexBinaryError(f"{path}: {exc}") from None
    if (version or not configured) and release.version != wanted.version:
        raise CodexBinaryError(f"{path}: reports {reported!r}, expected codex-cli "
                               f"{wanted.version}")
    return path, release


def parse_spec(spec: str) -> tuple[str | None, str | None, str | None]:
    """`codex[@VERSION][/LAYOUT][:PATH]` -> (version, layout, path), each None when absent."""
    head, sep, path = spec.partition(":")
    if not head.startswith("codex"):
        raise CodexBinaryError(f"{spec!r} is not a codex[@VERSION][/LAYOUT][:PATH] spec")
    rest = head.removeprefix("codex")
    rest, slash, layout = rest.partition("/")
    if (rest and not rest.startswith("@")) or rest == "@" or (slash and not layout):
        raise CodexBinaryError(f"--impl {spec!r}: expected codex[@VERSION][/LAYOUT][:PATH], "
                               f"e.g. codex@0.155.0 or codex/v1:/opt/codex")
    if sep and not path:
        raise CodexBinaryError(f"--impl {spec!r}: the path after ':' is empty")
    return rest.removeprefix("@") or None, layout or None, path or None

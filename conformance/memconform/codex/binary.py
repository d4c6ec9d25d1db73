"""Finding (and on first use installing) the Codex 0.144.6 binary."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

VERSION = "0.144.6"
PACKAGE = f"@openai/codex@{VERSION}"
BIN_ENV = "MEMCONFORM_CODEX_BIN"
NPM_DIR_ENV = "MEMCONFORM_CODEX_NPM_DIR"
WORKDIR_ENV = "MEMCONFORM_CODEX_WORKDIR"
VENDORED = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
INSTALL_TIMEOUT_S = 600


class CodexBinaryError(RuntimeError):
    """The Codex binary cannot be found, installed or run."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memconform"


def work_dir() -> Path:
    """Where Codex homes live: never under /tmp (`MEMCONFORM_CODEX_WORKDIR` overrides)."""
    return Path(os.environ.get(WORKDIR_ENV) or cache_dir() / "work")


def npm_dir() -> Path:
    return Path(os.environ.get(NPM_DIR_ENV) or cache_dir() / "codex-npm")


def install(prefix: Path) -> Path:
    """`npm install @openai/codex@0.144.6` into `prefix`; the Linux x64 build's binary."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise CodexBinaryError(f"the npm package ships a Linux x64 build; this is "
                               f"{platform.system()} {platform.machine()}: pass codex:PATH")
    npm = shutil.which("npm")
    if npm is None:
        raise CodexBinaryError(f"npm is not on PATH: install Node.js, or set {BIN_ENV}")
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                           str(prefix), PACKAGE], capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise CodexBinaryError(f"npm install {PACKAGE} failed: {done.stderr[-1500:]}")
    return prefix / VENDORED


def locate(explicit: str | None) -> Path:
    """`codex:PATH`, else $MEMCONFORM_CODEX_BIN, else the npm install in the user's cache
    (installed on first use); the binary must report version 0.144.6."""
    configured = explicit or os.environ.get(BIN_ENV)
    path = Path(configured) if configured else npm_dir() / VENDORED
    if not configured and not path.is_file():
        path = install(npm_dir())
    if not path.is_file() or not os.access(path, os.X_OK):
        raise CodexBinaryError(f"{path}: not an executable file")
    try:
        version = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                                 timeout=30, check=False).stdout.strip()
    except OSError as exc:
        raise CodexBinaryError(f"{path}: cannot run: {exc}") from exc
    if VERSION not in version:
        raise CodexBinaryError(f"{path}: reports {version!r}, expected codex-cli {VERSION}")
    return path

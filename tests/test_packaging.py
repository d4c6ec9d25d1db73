"""A porter installs the harness, not the bundled cloud service: its stack is an extra."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memconform.cloud.service import CloudSpecError, validate

SERVICE_STACK = ("fastapi", "uvicorn", "sqlalchemy", "psycopg")
BLOCK = '''
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"fastapi", "uvicorn", "sqlalchemy", "psycopg"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["serve"]
runpy.run_module("memref.cloud.serve", run_name="__main__")
'''


def test_the_service_stack_is_only_in_the_cloud_extra() -> None:
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    core = " ".join(project["project"]["dependencies"])
    assert not [name for name in SERVICE_STACK if name in core]
    extra = " ".join(project["project"]["optional-dependencies"]["cloud"])
    assert all(name in extra for name in SERVICE_STACK)


def test_the_bundled_service_without_the_extra_is_a_one_line_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "sqlalchemy" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(CloudSpecError, match=r"needs sqlalchemy: install the cloud extra "
                                             r"\(pip install 'memconform\[cloud\]'\)"):
        validate("ref", "sqlite")
    monkeypatch.setenv("MEMCONFORM_CLOUD_TOKEN", "t")
    assert validate("http://127.0.0.1:9", "sqlite")[0] == "url", "a running service needs none"


def test_serve_without_the_extra_says_which_extra(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCK], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "memref.cloud.serve: uvicorn is not installed; the cloud service needs the cloud "
        "extra: pip install 'memconform[cloud]'"]

"""Collect check metadata without running anything (for `memconform list` and MANIFEST.json)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import asdict
from typing import Any

import pytest

from memconform import __version__
from memconform.registry import meta_of, stable_id


class _Collector:
    def __init__(self) -> None:
        self.checks: list[dict[str, Any]] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            meta = meta_of(item)
            if meta is None:
                continue
            entry = asdict(meta)
            entry["check"] = meta.id
            entry["id"] = stable_id(item, meta)
            entry["rules"] = list(meta.rules)
            entry["needs"] = list(meta.needs)
            module = getattr(getattr(item, "module", None), "__name__", "")
            entry["profile"] = "cloud" if module.startswith("memconform.cloud_checks") \
                else "local"
            entry["module"] = module
            self.checks.append(entry)


class CollectionError(RuntimeError):
    """pytest could not collect the checks."""


def collect_checks() -> list[dict[str, Any]]:
    collector = _Collector()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # syrupy would report every snapshot as unused in a collect-only session
        code = pytest.main(["--pyargs", "memconform.checks", "memconform.cloud_checks",
                            "--collect-only", "-q",
                            "-p", "no:cacheprovider", "-p", "no:syrupy"], plugins=[collector])
    if code not in (0, 5):
        raise CollectionError(f"collecting checks failed (pytest exit {code}):\n{out.getvalue()}")
    return sorted(collector.checks, key=lambda c: c["id"])


def manifest(checks: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("id", "check", "profile", "area", "level", "rules", "title", "since", "needs",
            "smoke", "codex_since", "layout")
    return {"suite_version": __version__,
            "checks": [{k: c[k] for k in keys} for c in checks]}

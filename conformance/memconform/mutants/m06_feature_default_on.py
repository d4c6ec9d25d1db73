"""The memories feature defaults to on when config.toml does not mention it."""

from pathlib import Path
from typing import Any

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter
from memref.releases import DEFAULT, Release

MUTANT = Mutant("m06-feature-default-on", __doc__ or "",
                ("startup.guard.feature-off[absent]", "config.feature.default-off[absent]"))
_original = config.parse_config


def _parse(data: dict[str, Any], source: str = "config.toml",
           release: Release = DEFAULT, home: Path | None = None,
           pin_version: str | None = None) -> config.CodexConfig:
    features = dict(data.get("features") or {})
    features.setdefault("memories", True)
    return _original({**data, "features": features}, source, release, home, pin_version)


def factory() -> ReferenceAdapter:
    patch(config, "parse_config", _parse)
    return ReferenceAdapter()

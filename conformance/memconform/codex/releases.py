"""The Codex releases the harness knows, one `fixtures/codex-<version>/release.toml` each
(facts observed on that release's binary, beside its schema dumps)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from memconform import resources

DEFAULT = resources.CODEX_VERSION  # the release the suite's rules were written against
DRIVEN = ("full", "unverified")
LAYOUTS = ("v1", "v2")  # memories/ + memories_1.sqlite; memories_v2/ + memories_v2_1.sqlite
_VERSION = re.compile(r"\d+\.\d+\.\d+")
_FEATURE = re.compile(r"[a-z0-9_]+")


class ReleaseError(ValueError):
    """A release the harness does not know, or a release file that cannot be used."""


@dataclass(frozen=True)
class Release:
    version: str
    feature_stage: str
    feature_default: bool
    layouts: tuple[str, ...]
    default_layout: str
    memories_keys: frozenset[str]
    stage1_model: str
    consolidation_model: str
    validates_agent_artifacts: bool
    databases: dict[str, int]
    driven: str
    expectations: str | None  # layout v1
    expectations_v2: str | None = None  # layout v2
    # with `dual_write = true`: the layouts a startup runs, by the layout `version` selects
    dual_write_runs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # on stderr (with RUST_LOG=opentelemetry_sdk=debug) when a startup's pipeline has ended
    pipeline_end: str | None = None
    # features no memory check needs, turned off for each session on its command line
    off_features: tuple[str, ...] = ()

    def expectations_for(self, layout: str) -> str | None:
        return self.expectations_v2 if layout == "v2" else self.expectations

    @property
    def package(self) -> str:
        return f"@openai/codex@{self.version}"


@cache
def known() -> dict[str, Release]:
    """Every release with a `release.toml`, by version, oldest first."""
    found = {}
    for path in resources.fixtures_dir().glob("codex-*/release.toml"):
        release = _load(path.parent.name.removeprefix("codex-"), path.read_text("utf-8"))
        found[release.version] = release
    return dict(sorted(found.items(), key=lambda kv: _key(kv[0])))


def get(version: str) -> Release:
    try:
        return known()[version]
    except KeyError:
        raise ReleaseError(f"Codex {version} is not a release memconform knows (known: "
                           f"{', '.join(known())}); each needs its facts in "
                           f"fixtures/codex-{version}/release.toml") from None


def from_reported(text: str) -> Release:
    """The release of a binary from what `codex --version` printed (`codex-cli 0.144.6`)."""
    match = _VERSION.search(text)
    if match is None:
        raise ReleaseError(f"`codex --version` printed {text.strip()!r}: no version in it")
    return get(match.group())


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def known_order(version: str) -> tuple[int, ...]:
    """A sort key that puts releases oldest first."""
    return _key(version)


def at_least(version: str, since: str) -> bool:
    """Whether release `version` is `since` or later (both `X.Y.Z`)."""
    return _key(version) >= _key(since)


def _listed(data: dict[str, Any], key: str) -> list[Any]:
    """The array `key` of a release file (empty when absent)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise TypeError(f"{key} is {value!r}, not an array")
    return value


def _load(folder_version: str, text: str) -> Release:
    where = f"fixtures/codex-{folder_version}/release.toml"
    try:
        data = tomllib.loads(text)
        release = Release(
            version=str(data["version"]), feature_stage=str(data["feature_stage"]),
            feature_default=bool(data["feature_default"]), layouts=tuple(data["layouts"]),
            default_layout=str(data["default_layout"]),
            memories_keys=frozenset(data["memories_keys"]),
            stage1_model=str(data["stage1_model"]),
            consolidation_model=str(data["consolidation_model"]),
            validates_agent_artifacts=bool(data["validates_agent_artifacts"]),
            databases={str(k): int(v) for k, v in data["databases"].items()},
            driven=str(data["driven"]), expectations=data.get("expectations"),
            expectations_v2=data.get("expectations_v2"),
            dual_write_runs={str(k): tuple(str(x) for x in v)
                             for k, v in data.get("dual_write_runs", {}).items()},
            pipeline_end=data.get("pipeline_end"),
            off_features=tuple(_listed(data, "off_features")))
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReleaseError(f"{where}: {type(exc).__name__}: {exc}") from exc
    problems = []
    if release.version != folder_version:
        problems.append(f"version {release.version!r} is not the folder's {folder_version!r}")
    layouts = set(release.layouts)
    if not layouts <= set(LAYOUTS) or release.default_layout not in layouts:
        problems.append(f"layouts {list(release.layouts)} / default {release.default_layout!r}"
                        f" are not among {list(LAYOUTS)}")
    if any(k not in layouts or not set(v) <= layouts
           for k, v in release.dual_write_runs.items()):
        problems.append(f"dual_write_runs {release.dual_write_runs} names a layout the release "
                        "does not have")
    if not all(isinstance(f, str) and _FEATURE.fullmatch(f) for f in release.off_features):
        problems.append(f"off_features {list(release.off_features)} are not all feature names "
                        "(as `codex features list` prints them)")
    if release.driven not in DRIVEN:
        problems.append(f"driven {release.driven!r} is not one of {list(DRIVEN)}")
    if problems:
        raise ReleaseError(f"{where}: {'; '.join(problems)}")
    return release

"""Load a Codex home's `config.toml` the way Codex 0.144.6 does for the memories feature.

Rules: CFG-01 (keys and defaults), CFG-02 (clamps; negatives clamped for the signed keys,
refused for the two unsigned ones), CFG-03 (alias and unknown keys), CFG-04 (a value of the
wrong type, or an integer outside the signed 64-bit range, is an error naming the key). The
keys of later releases (`version`, `dual_write`, `consolidation_service_tier`) are read only
for a release that has them (LAYOUT-01..LAYOUT-03, AGENT-05).
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memref.layout import V1, Layout
from memref.layout import select as select_layouts
from memref.releases import DEFAULT as DEFAULT_RELEASE
from memref.releases import Release

DEFAULT_CHATGPT_BASE_URL = "https://chatgpt.com/backend-api"

BOOL_KEYS: dict[str, bool] = {
    "generate_memories": True,
    "use_memories": True,
    "dedicated_tools": False,
    "disable_on_external_context": False,
}
# key -> (default, low, high)
INT_KEYS: dict[str, tuple[int, int, int]] = {
    "min_rollout_idle_hours": (6, 1, 48),
    "max_rollout_age_days": (10, 0, 90),
    "max_rollouts_per_startup": (2, 1, 128),
    "max_raw_memories_for_consolidation": (256, 1, 4096),
    "max_unused_days": (30, 0, 365),
    "min_rate_limit_remaining_percent": (25, 0, 100),
}
UNSIGNED_KEYS = frozenset({"max_rollouts_per_startup", "max_raw_memories_for_consolidation"})
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
STR_KEYS = ("extract_model", "consolidation_model")
ALIASES = {"no_memories_if_mcp_or_web_search": "disable_on_external_context"}
MEMORIES_KEYS = frozenset([*BOOL_KEYS, *INT_KEYS, *STR_KEYS])


class ConfigError(ValueError):
    """`config.toml` cannot be used; the message names the file and the offending key."""


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    env_key: str | None = None
    wire_api: str = "responses"
    stream_idle_timeout_ms: int | None = None


@dataclass(frozen=True)
class MemoriesConfig:
    generate_memories: bool = True
    use_memories: bool = True
    dedicated_tools: bool = False
    disable_on_external_context: bool = False
    min_rollout_idle_hours: int = 6
    max_rollout_age_days: int = 10
    max_rollouts_per_startup: int = 2
    max_raw_memories_for_consolidation: int = 256
    max_unused_days: int = 30
    min_rate_limit_remaining_percent: int = 25
    extract_model: str | None = None
    consolidation_model: str | None = None
    version: str | None = None  # LAYOUT-01 (releases with two layouts)
    dual_write: bool = False  # LAYOUT-02
    consolidation_service_tier: str | None = None  # AGENT-05 (0.171.0)


@dataclass(frozen=True)
class CodexConfig:
    feature_memories: bool = False
    model: str | None = None
    model_context_window: int | None = None
    chatgpt_base_url: str = DEFAULT_CHATGPT_BASE_URL
    provider: Provider | None = None
    memories: MemoriesConfig = field(default_factory=MemoriesConfig)
    release: Release = DEFAULT_RELEASE  # the Codex release whose behaviour applies
    layout: Layout = V1  # where the read path and this pipeline run keep memories
    write_layouts: tuple[Layout, ...] = (V1,)  # the layouts a startup runs

    def for_layout(self, chosen: Layout) -> CodexConfig:
        """This config with one layout's pipeline selected (a dual-write startup runs each)."""
        return dataclasses.replace(self, layout=chosen)

    @property
    def extract_model(self) -> str:
        return self.memories.extract_model or self.release.extract_model

    @property
    def consolidation_model(self) -> str:
        return self.memories.consolidation_model or self.release.consolidation_model


def load_config(home: Path, release: Release = DEFAULT_RELEASE,
                pin_version: str | None = None) -> CodexConfig:
    """Read `<home>/config.toml`; a missing file gives the defaults. `pin_version` is a
    `memories.version` given beside the file (an adapter's choice), used when the file sets
    none."""
    path = home / "config.toml"
    if not path.exists():
        return parse_config({}, source=str(path), release=release, home=home,
                            pin_version=pin_version)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path}: is a directory, not a file") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from exc
    return parse_config(data, source=str(path), release=release, home=home,
                        pin_version=pin_version)


def parse_config(data: dict[str, Any], source: str = "config.toml",
                 release: Release = DEFAULT_RELEASE, home: Path | None = None,
                 pin_version: str | None = None) -> CodexConfig:
    """`home` lets the layout depend on the folders there (LAYOUT-01)."""
    features = _table(data, "features", source)
    feature = features.get("memories", False)
    if not isinstance(feature, bool):
        raise ConfigError(f"{source}: features.memories must be a boolean, got {feature!r}")
    memories = _memories(_table(data, "memories", source), source, release)
    if memories.version is None and pin_version is not None and len(release.layouts) > 1:
        memories = dataclasses.replace(memories, version=pin_version)
    read, written = select_layouts(release, memories.version, memories.dual_write, home)
    return CodexConfig(
        feature_memories=feature,
        model=_opt_str(data, "model", source),
        model_context_window=_opt_int(data, "model_context_window", source),
        chatgpt_base_url=(_opt_str(data, "chatgpt_base_url", source)
                          or DEFAULT_CHATGPT_BASE_URL).rstrip("/"),
        provider=_provider(data, source),
        memories=memories,
        release=release,
        layout=read,
        write_layouts=written,
    )


def _table(data: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{key}] must be a table")
    return value


def _opt_str(data: dict[str, Any], key: str, source: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
    return value


def _opt_int(data: dict[str, Any], key: str, source: str) -> int | None:
    value = data.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
    if value is not None and not I64_MIN <= value <= I64_MAX:
        raise ConfigError(f"{source}: {key}: {value} is outside the signed 64-bit range")
    return value


def _provider(data: dict[str, Any], source: str) -> Provider | None:
    name = _opt_str(data, "model_provider", source)
    if name is None:
        return None
    table = _table(data, "model_providers", source).get(name)
    if not isinstance(table, dict):
        raise ConfigError(
            f"{source}: model_provider {name!r} has no [model_providers.{name}] table")
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url:
        raise ConfigError(f"{source}: model_providers.{name}.base_url must be a non-empty string")
    wire_api = table.get("wire_api", "responses")
    if wire_api != "responses":
        raise ConfigError(f"{source}: model_providers.{name}.wire_api {wire_api!r} is unsupported")
    env_key = table.get("env_key")
    if env_key is not None and not isinstance(env_key, str):
        raise ConfigError(f"{source}: model_providers.{name}.env_key must be a string")
    idle = _opt_int(table, "stream_idle_timeout_ms", f"{source}: model_providers.{name}")
    return Provider(name=name, base_url=base_url.rstrip("/"), env_key=env_key, wire_api=wire_api,
                    stream_idle_timeout_ms=idle)


def _release_keys(release: Release) -> frozenset[str]:
    keys = set(MEMORIES_KEYS)
    if len(release.layouts) > 1:
        keys |= {"version", "dual_write"}
    if release.service_tier_key:
        keys.add("consolidation_service_tier")
    return frozenset(keys)


def _memories(table: dict[str, Any], source: str,
              release: Release = DEFAULT_RELEASE) -> MemoriesConfig:
    values: dict[str, Any] = {}
    known = _release_keys(release)
    for raw_key, value in table.items():
        key = ALIASES.get(raw_key, raw_key)
        if key not in known:
            continue  # CFG-03: unknown keys are ignored outside strict mode
        where = f"{source}: memories.{raw_key}"
        if key == "version":  # LAYOUT-03: a bad value stops Codex even outside strict mode
            if value not in release.layouts:
                raise ConfigError(f"{where} must be one of "
                                  f"{', '.join(map(repr, release.layouts))}, got {value!r}")
            values[key] = value
        elif key == "dual_write" or key in BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be a boolean, got {value!r}")
            values[key] = value
        elif key in INT_KEYS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{where} must be an integer, got {value!r}")
            if not I64_MIN <= value <= I64_MAX:
                raise ConfigError(f"{where}: {value} is outside the signed 64-bit range")
            if key in UNSIGNED_KEYS and value < 0:
                raise ConfigError(f"{where} must not be negative, got {value}")
            _, low, high = INT_KEYS[key]
            values[key] = min(max(value, low), high)
        else:
            if not isinstance(value, str):
                raise ConfigError(f"{where} must be a string, got {value!r}")
            values[key] = value
    return MemoriesConfig(**values)

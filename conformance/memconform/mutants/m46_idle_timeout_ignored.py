"""The provider's stream_idle_timeout_ms is ignored: a stalled stream is waited out."""

from memconform.mutants import Mutant, patch
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m46-idle-timeout-ignored", __doc__ or "", ("p1.model.stall",))
_original = config._provider


def _without_idle(data: dict[str, object], source: str) -> config.Provider | None:
    provider = _original(data, source)
    if provider is None:
        return None
    return config.Provider(provider.name, provider.base_url, provider.env_key,
                           provider.wire_api)


def factory() -> ReferenceAdapter:
    patch(config, "_provider", _without_idle)
    return ReferenceAdapter()

"""The Codex releases whose memory pipeline memref implements, and what differs between them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Release:
    version: str
    extract_model: str  # the stage-1 model when extract_model is not set
    consolidation_model: str  # the consolidation agent's model when consolidation_model is not
    validates_artifacts: bool  # P2-RUN-08: the agent must leave valid artifacts
    layouts: tuple[str, ...] = ("v1",)  # the memory layouts it has (LAYOUT-01)
    default_layout: str = "v1"
    v1_folder_keeps_v1: bool = False  # an existing memories/ keeps the default off v2
    dual_write_any_layout: bool = False  # dual_write runs both whichever layout is selected
    service_tier_key: bool = False  # `consolidation_service_tier` (AGENT-05)
    consolidation_progress: bool = False  # memories DB migration 2 (P2-PROG-01)


RELEASES = {r.version: r for r in (
    Release("0.144.6", "gpt-5.4-mini", "gpt-5.4", validates_artifacts=False),
    Release("0.155.0", "gpt-5.6-luna", "gpt-5.6-terra", validates_artifacts=True,
            layouts=("v1", "v2"), dual_write_any_layout=True, consolidation_progress=True),
    Release("0.171.0", "gpt-6-luna", "gpt-6.1-terra", validates_artifacts=True,
            layouts=("v1", "v2"), default_layout="v2", v1_folder_keeps_v1=True,
            service_tier_key=True, consolidation_progress=True),
)}
DEFAULT = RELEASES["0.144.6"]


def get(version: str) -> Release:
    try:
        return RELEASES[version]
    except KeyError:
        raise ValueError(f"memref implements Codex {', '.join(RELEASES)}, not "
                         f"{version!r}") from None

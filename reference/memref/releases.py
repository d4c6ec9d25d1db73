"""The Codex releases whose memory pipeline memref implements (layout v1), and what differs
between them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Release:
    version: str
    extract_model: str  # the stage-1 model when extract_model is not set
    consolidation_model: str  # the consolidation agent's model when consolidation_model is not
    validates_artifacts: bool  # P2-RUN-08: the agent must leave MEMORY.md and a v1 summary


RELEASES = {r.version: r for r in (
    Release("0.144.6", "gpt-5.4-mini", "gpt-5.4", validates_artifacts=False),
    Release("0.155.0", "gpt-5.6-luna", "gpt-5.6-terra", validates_artifacts=True),
)}
DEFAULT = RELEASES["0.144.6"]


def get(version: str) -> Release:
    try:
        return RELEASES[version]
    except KeyError:
        raise ValueError(f"memref implements Codex {', '.join(RELEASES)} (memory layout v1), "
                         f"not {version!r}") from None

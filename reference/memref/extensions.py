"""Memory extensions: the ad-hoc notes extension seeded into every memory root (EXT-01)."""

from __future__ import annotations

from pathlib import Path

AD_HOC_DIR = Path("extensions") / "ad_hoc"
AD_HOC_INSTRUCTIONS = """\
# Ad-hoc notes

Files in `notes/` beside this file were written during sessions, when the user or the agent
chose to remember something right away instead of waiting for extraction. Each note is a small
Markdown file named `<timestamp>-<slug>.md`.

During consolidation, treat every note as evidence of the same weight as a rollout summary:
fold durable facts into MEMORY.md and memory_summary.md, drop what is stale or contradicted by
newer evidence, and never copy a secret from a note into any memory file.
"""


def seed_ad_hoc_instructions(root: Path) -> bool:
    """Create `instructions.md` only when absent; an existing file is never touched."""
    target = root / AD_HOC_DIR / "instructions.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("x", encoding="utf-8") as handle:
            handle.write(AD_HOC_INSTRUCTIONS)
    except FileExistsError:
        return False
    return True

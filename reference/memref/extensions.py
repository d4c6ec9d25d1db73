"""Memory extensions: the ad-hoc notes extension seeded into every memory root (EXT-01) and
the retention of dated extension resources (EXT-02)."""

from __future__ import annotations

import calendar
import logging
import time
from pathlib import Path

from memref.files import create_atomic, remove_leftovers

log = logging.getLogger(__name__)

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
    """Create `instructions.md` when absent (or left empty by a killed writer); a file with
    content is never touched."""
    target = root / AD_HOC_DIR / "instructions.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    # a concurrent startup's temporary file may go too: `create_atomic` then writes it again
    remove_leftovers(target.parent)
    return create_atomic(target, AD_HOC_INSTRUCTIONS)


RESOURCE_RETENTION_S = 7 * 86_400
STAMP_FORMAT = "%Y-%m-%dT%H-%M-%S"


def resource_time(name: str) -> int | None:
    """The Unix time in a resource file name's `%Y-%m-%dT%H-%M-%S` (UTC) prefix, if any."""
    if not name.endswith(".md"):
        return None
    try:
        return calendar.timegm(time.strptime(name[:19], STAMP_FORMAT))
    except ValueError:
        return None


def prune_resources(root: Path, now: int) -> None:
    """Delete extension resources whose name is dated at least seven days ago (EXT-02).

    Only extensions with an `instructions.md` are looked at, only files directly in their
    `resources/`; a failed removal is logged and skipped."""
    base = root / "extensions"
    if not base.is_dir():
        return
    for extension in sorted(base.iterdir()):
        resources = extension / "resources"
        if (not (extension / "instructions.md").is_file() or not resources.is_dir()
                or resources.is_symlink()):
            continue
        for entry in sorted(resources.iterdir()):
            stamp = resource_time(entry.name)
            if (stamp is None or entry.is_symlink() or not entry.is_file()
                    or stamp > now - RESOURCE_RETENTION_S):
                continue
            try:
                entry.unlink()
            except OSError as exc:
                log.warning("could not remove extension resource %s: %s", entry, exc)

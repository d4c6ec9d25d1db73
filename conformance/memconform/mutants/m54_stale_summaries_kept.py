"""Summaries of threads that are no longer selected are left in rollout_summaries/."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import materialize, phase2
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m54-stale-summaries-kept", __doc__ or "",
                ("p2.fs.stale-summaries", "p2.diff.forgetting"))


def sync_inputs(root: Path, selected: list[Selected], raw_memories: bool = True) -> None:
    folder = root / materialize.SUMMARIES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for memory in selected:
        (folder / f"{materialize.stem_of(memory)}.md").write_text(
            materialize.render_summary(memory), encoding="utf-8")
    (root / materialize.RAW_MEMORIES).write_text(materialize.render_raw_memories(selected),
                                                 encoding="utf-8")


def factory() -> ReferenceAdapter:
    patch(phase2, "sync_inputs", sync_inputs)
    return ReferenceAdapter()

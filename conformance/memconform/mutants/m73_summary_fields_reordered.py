"""Summary files list cwd before rollout_path (raw_memories.md's order, not their own)."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m73-summary-fields-reordered", __doc__ or "",
                ("p2.fs.summary-file[with-branch]", "p2.fs.tree"))


def render_summary(memory: Selected) -> str:
    lines = [f"thread_id: {memory.thread_id}",
             f"updated_at: {materialize.rfc3339(memory.source_updated_at)}",
             f"cwd: {memory.cwd}", f"rollout_path: {memory.rollout_path}"]
    if memory.git_branch:
        lines.append(f"git_branch: {memory.git_branch}")
    return "\n".join(lines) + "\n\n" + memory.rollout_summary + "\n"


def factory() -> ReferenceAdapter:
    patch(materialize, "render_summary", render_summary)
    return ReferenceAdapter()

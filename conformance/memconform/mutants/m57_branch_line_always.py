"""Summary files print a git_branch line even for threads without a branch."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter
from memref.selection import Selected

MUTANT = Mutant("m57-branch-line-always", __doc__ or "",
                ("p2.fs.summary-file[without-branch]",))


def render_summary(memory: Selected) -> str:
    return (f"thread_id: {memory.thread_id}\n"
            f"updated_at: {materialize.rfc3339(memory.source_updated_at)}\n"
            f"rollout_path: {memory.rollout_path}\ncwd: {memory.cwd}\n"
            f"git_branch: {memory.git_branch or ''}\n\n{memory.rollout_summary}\n")


def factory() -> ReferenceAdapter:
    patch(materialize, "render_summary", render_summary)
    return ReferenceAdapter()

"""The 4 MiB bound of the workspace diff is taken to include the truncation marker: a diff of
exactly 4 194 304 bytes is cut, and a longer one is cut short of the bound by the marker's
length."""

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m158-diff-bound-counts-marker", __doc__ or "",
                ("p2.diff.bounded-exact[cut-one-byte-into-a-character]",
                 "p2.diff.bounded-exact[cut-two-bytes-into-a-character]",
                 "p2.diff.bounded-exact[exactly-the-bound]"))
_render = workspace.render_diff_file


def render_diff_file(workspace_diff: workspace.Diff) -> str:
    limit = workspace.MAX_DIFF_BYTES
    marker = f"\n[workspace diff truncated at {limit} bytes]\n"
    room = limit - len(marker)
    if len(workspace_diff.text.encode("utf-8")) <= room:
        return _render(workspace_diff)
    body = workspace._cut(workspace_diff.text, room)
    body = body if body.endswith("\n") else body + "\n"
    head = _render(workspace.Diff(workspace_diff.changes, "\n"))[:-len("\n```\n")]
    return head + body + marker + "```\n"


def factory() -> ReferenceAdapter:
    patch(workspace, "render_diff_file", render_diff_file)
    return ReferenceAdapter()

"""The 4 MiB cut of the workspace diff backs off at most two bytes to a character boundary, as
a port that only thought of 2- and 3-byte characters would: a cut three bytes into a 4-byte
character keeps that character's first byte, which decodes to U+FFFD."""

from memconform.mutants import Mutant, patch
from memref import workspace
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m218-diff-cut-backs-off-two-bytes", __doc__ or "",
                ("p2.diff.bounded-exact[cut-three-bytes-into-a-four-byte-character]",))


def cut(text: str, limit: int) -> str:
    data = text.encode("utf-8")[:limit]
    for back in range(3):
        try:
            return data[:len(data) - back].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return data[:len(data) - 2].decode("utf-8", "replace")


def factory() -> ReferenceAdapter:
    patch(workspace, "_cut", cut)
    return ReferenceAdapter()

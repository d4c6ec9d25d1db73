"""Only follow-up messages count as external context; a coordinator parent does not."""

import sys

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract

MUTANT = Mutant("c02-coordinator-parent-ignored", __doc__ or "",
                ("cloud.gate[coordinator-parent-is-external-context]",), profile="cloud")


def apply() -> None:
    patch(extract, "external_context",
          lambda con, task: bool(task["followup_messages"] > 0))


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

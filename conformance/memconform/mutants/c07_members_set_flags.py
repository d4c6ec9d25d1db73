"""Any project member may set a task's flags, not only those who may create tasks."""

import sys
from typing import Any

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import access

MUTANT = Mutant("c07-members-set-flags", __doc__ or "", ("cloud.flags.creator-only",),
                profile="cloud")
_task_access = access.task_access


def apply() -> None:
    def task_access(con: Any, task_id: str, user_id: str) -> str:
        found = _task_access(con, task_id, user_id)
        return "creator" if found == "member" else found

    patch(access, "task_access", task_access)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

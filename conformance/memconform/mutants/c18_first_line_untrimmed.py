"""A memory's first line keeps the goal's surrounding whitespace."""

import sys
from typing import Any

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract

MUTANT = Mutant("c18-first-line-untrimmed", __doc__ or "",
                ("cloud.content.shape[first-line-trimmed]",), profile="cloud")


def apply() -> None:
    def first_line(task: dict[str, Any]) -> str:
        source = str(task["goal"] if task["goal"].strip() else task["prompt"])
        return source.split("\n", 1)[0]

    patch(extract, "first_line", first_line)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

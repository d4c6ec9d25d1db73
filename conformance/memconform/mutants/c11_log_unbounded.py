"""The extraction log keeps every entry."""

import sys

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import extract

MUTANT = Mutant("c11-log-unbounded", __doc__ or "", ("cloud.log.bounded",), profile="cloud")


def apply() -> None:
    patch(extract, "LOG_LIMIT", 1_000_000)


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

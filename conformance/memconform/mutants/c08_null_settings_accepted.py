"""`null` for a switch or a number is not refused up front (the store then fails)."""

import sys

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import settings

MUTANT = Mutant("c08-null-settings-accepted", __doc__ or "",
                ("cloud.settings.invalid[switch-null]", "cloud.settings.invalid[idle-null]"),
                profile="cloud")


def apply() -> None:
    patch(settings, "NOT_NULL", ())


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

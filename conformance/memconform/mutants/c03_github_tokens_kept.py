"""GitHub `ghp_`/`gho_` tokens are not redacted."""

import re
import sys

from memconform.mutants import Mutant, patch, serve_patched
from memref.cloud import redact

MUTANT = Mutant("c03-github-tokens-kept", __doc__ or "",
                ("cloud.content.redacted[github-pat]", "cloud.content.redacted[github-oauth]"),
                profile="cloud")


def apply() -> None:
    patch(redact, "_PREFIXED", re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|xox[a-z]-[A-Za-z0-9-]{8,})"))


if __name__ == "__main__":
    sys.exit(serve_patched(apply))

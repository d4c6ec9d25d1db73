"""The four-character stem hash is taken from the wrong bits of the seed."""

from memconform.mutants import Mutant, patch
from memref import materialize
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m56-stem-hash-shifted", __doc__ or "", ("p2.fs.stem[v7-no-slug]",))
_short_hash = materialize._short_hash


def factory() -> ReferenceAdapter:
    patch(materialize, "_short_hash", lambda seed: _short_hash(seed >> 8))
    return ReferenceAdapter()

"""Following 0.171.0, `dual_write = true` with layout v2 selected also runs layout v1 (what
0.155.0 does; 0.171.0 runs v2 alone)."""

import dataclasses

from memconform.mutants import Mutant
from memref import releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m211-dual-write-from-v2-runs-v1", __doc__ or "",
                ("startup.layout.runs[dual-write-from-v2]",))


def factory() -> ReferenceAdapter:
    release = dataclasses.replace(releases.get("0.171.0"), dual_write_any_layout=True)
    return ReferenceAdapter(release, "v2")

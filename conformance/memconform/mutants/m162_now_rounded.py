""""now" in Unix seconds is now_ms rounded to the nearest second instead of rounded down."""

from memconform.mutants import Mutant, patch
from memref import runtime
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m162-now-rounded", __doc__ or "",
                ("p1.job.floored-now[success]", "p1.job.floored-now[failure]",
                 "p1.job.claim-floored-now",
                 "p1.job.state-bounds[backoff-ends-next-second-now-at-999ms]",
                 "p1.job.state-bounds[lease-ends-next-second-now-at-999ms]",
                 "p1.ret.bound[five-days-now-at-999ms]"))


def factory() -> ReferenceAdapter:
    patch(runtime.Runtime, "now", property(lambda self: (self.now_ms + 500) // 1000))
    return ReferenceAdapter()

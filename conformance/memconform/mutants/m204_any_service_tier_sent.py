"""Any consolidation_service_tier value is sent as service_tier, not only flex and
priority."""

from memconform.mutants import Mutant
from memref import phase2, releases
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m204-any-service-tier-sent", __doc__ or "", ("p2.agent.service-tier[bogus]",))


class _Everything(frozenset[str]):
    def __contains__(self, item: object) -> bool:
        return item is not None


def factory() -> ReferenceAdapter:
    phase2.SERVICE_TIERS = _Everything()
    return ReferenceAdapter(releases.get("0.171.0"))

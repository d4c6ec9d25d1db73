"""Layout v2 takes a null or missing slug for an empty one, as layout v1 takes it for none."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import phase1, releases, stage1_output
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m199-v2-null-slug-accepted", __doc__ or "",
                ("p1.v2.invalid[slug-null]", "p1.v2.invalid[slug-missing]"))


def parse_v2(text: str) -> stage1_output.StageOneOutput:
    import json

    value: Any = json.loads(text)
    if isinstance(value, dict) and value.get("rollout_slug") is None:
        value["rollout_slug"] = ""
        text = json.dumps(value)
    return stage1_output.parse_v2(text)


def factory() -> ReferenceAdapter:
    patch(phase1, "parse_v2", parse_v2)
    return ReferenceAdapter(releases.get("0.171.0"), "v2")

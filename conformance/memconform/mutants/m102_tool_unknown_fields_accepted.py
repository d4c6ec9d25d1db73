"""Tool arguments with unknown fields are accepted, the fields ignored."""

import json

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.tools import arguments

MUTANT = Mutant("m102-tool-unknown-fields-accepted", __doc__ or "",
                ("read.tool.search[legacy-single-query-refused]",
                 "read.tool.args[unknown-field-refused]"))
_parse = arguments.parse


def parse(raw: str, fields: tuple[arguments.Field, ...]) -> dict[str, object]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return _parse(raw, fields)
    names = {f.name for f in fields}
    if isinstance(data, dict):
        raw = json.dumps({k: v for k, v in data.items() if k in names})
    return _parse(raw, fields)


def factory() -> ReferenceAdapter:
    patch(arguments, "parse", parse)
    return ReferenceAdapter()

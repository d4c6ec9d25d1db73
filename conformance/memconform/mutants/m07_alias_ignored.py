"""The legacy key no_memories_if_mcp_or_web_search is ignored."""

from memconform.mutants import Mutant
from memref import config
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m07-alias-ignored", __doc__ or "",
                ("config.alias[no_memories_if_mcp_or_web_search]",))


def factory() -> ReferenceAdapter:
    config.ALIASES.clear()
    return ReferenceAdapter()

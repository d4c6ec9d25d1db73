"""The memory tools are offered whenever memories are used, without dedicated_tools."""

from dataclasses import replace
from typing import Any

from memconform.mutants import Mutant, patch
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig
from memref.tools import calls

MUTANT = Mutant("m101-tools-without-switch", __doc__ or "",
                ("read.tool.gated[dedicated-tools-default-off]",
                 "read.tool.gated[dedicated-tools-off]"))
_offered = calls.offered


def offered(config: CodexConfig) -> list[dict[str, Any]]:
    return _offered(replace(config, memories=replace(config.memories, dedicated_tools=True)))


def factory() -> ReferenceAdapter:
    patch(calls, "offered", offered)
    return ReferenceAdapter()

"""The memory summary is injected even with memories.use_memories = false."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import adapter, injection
from memref.adapter import ReferenceAdapter
from memref.config import CodexConfig
from memref.prompts import memory_instructions
from memref.startup import memory_root

MUTANT = Mutant("m86-injection-ignores-use-memories", __doc__ or "",
                ("read.inj.summary[use-memories-off]",))


def developer_fragments(home: Path, config: CodexConfig) -> list[str]:
    if not config.feature_memories:
        return []
    root = memory_root(home, config).absolute()
    summary = injection.read_summary(root)
    return [] if summary is None else [memory_instructions(str(root), summary)]


def factory() -> ReferenceAdapter:
    patch(adapter, "developer_fragments", developer_fragments)
    return ReferenceAdapter()

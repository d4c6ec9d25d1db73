"""A consolidation agent whose model call fails is recorded as a success (Codex 0.144.6 does)."""

from typing import Any

from memconform.mutants import Mutant, patch
from memref import agent, phase2
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m63-agent-failure-is-success", __doc__ or "",
                ("p2.run.agent-failure", "p2.git.failure-stays-dirty"))
_run_agent = agent.run_agent


def run_agent(*args: Any, **kwargs: Any) -> int:
    try:
        return _run_agent(*args, **kwargs)
    except agent.LostOwnership:
        raise
    except agent.AgentError:
        return 0


def factory() -> ReferenceAdapter:
    patch(phase2, "run_agent", run_agent)
    return ReferenceAdapter()

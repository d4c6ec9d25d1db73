"""The consolidation agent's session is recorded like a user session: a thread row and a
rollout holding its prompt."""

import uuid
from pathlib import Path
from typing import Any

from memconform.home import CodexHome
from memconform.mutants import Mutant, patch
from memref import agent, phase2
from memref.adapter import ReferenceAdapter

MUTANT = Mutant("m87-agent-session-recorded", __doc__ or "",
                ("p2.agent.no-rollout", "p2.agent.not-a-candidate"))
_run_agent = agent.run_agent


def run_agent(provider: Any, root: Path, run: agent.AgentRun, *args: Any, **kwargs: Any) -> int:
    turns = _run_agent(provider, root, run, *args, **kwargs)
    started_ms = uuid.UUID(run.thread_id).int >> 80
    CodexHome(root.parent, now_ms=started_ms, model_base_url="").add_thread(
        thread_id=run.thread_id, updated_ago_ms=0, user_text=run.prompt,
        assistant_text="Consolidated.")
    return turns


def factory() -> ReferenceAdapter:
    patch(phase2, "run_agent", run_agent)
    return ReferenceAdapter()

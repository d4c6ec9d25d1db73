"""The plan-usage guard is asked before pruning, so a startup it skips prunes nothing."""

from pathlib import Path

from memconform.mutants import Mutant, patch
from memref import adapter, startup, store
from memref.config import CodexConfig
from memref.extensions import seed_ad_hoc_instructions
from memref.guard import rate_limits_ok
from memref.phase1 import run_phase1
from memref.phase2 import run_phase2
from memref.retention import prune_stage1_outputs
from memref.runtime import Runtime

MUTANT = Mutant("m171-guard-before-pruning", __doc__ or "",
                ("p1.guard.skip-state[over-threshold-skips]",))


def run_layout(home: Path, session: startup.Session, rt: Runtime,
               config: CodexConfig) -> startup.StartupResult:
    result = startup.StartupResult(ran=True)
    root = startup.memory_root(home, config)
    root.mkdir(parents=True, exist_ok=True)
    result.steps.append("root")
    if seed_ad_hoc_instructions(root):
        result.steps.append("seed_extensions")
    # the bug: the rate-limit check moved ahead of the retention step
    if not rate_limits_ok(home, config):
        result.skipped_reason = "rate_limited"
        return result
    memories = store.memories_db(home, config)
    try:
        prune_stage1_outputs(memories, max_unused_days=config.memories.max_unused_days,
                             now=rt.now)
    finally:
        memories.close()
    result.phase1 = run_phase1(home, config, session.thread_id, rt, session.env)
    result.phase2 = run_phase2(home, root, config, session.thread_id, rt, session.env)
    return result


def factory() -> adapter.ReferenceAdapter:
    patch(startup, "run_layout", run_layout)
    return adapter.ReferenceAdapter()

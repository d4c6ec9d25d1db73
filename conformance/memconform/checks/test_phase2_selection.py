"""P2-SEL: which stage-1 outputs a consolidation materialises (fixtures/phase2/selection.json),
seen through `raw_memories.md`, the summary files and the selection marks after success."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.checks.consolidation import (
    DONE,
    EMPTY_RAW,
    RAW,
    SUMMARIES,
    agent_finishes,
    configure,
    global_job,
    marks,
    raw_threads,
    seed_memory,
    summary_files,
)
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import MockModel, message
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

CASES = fixture_json("phase2", "selection.json")["cases"]
RULES = ("P2-SEL-01", "P2-SEL-02", "P2-SEL-03")


def seed(home: CodexHome, clock: HarnessClock, spec: dict[str, Any]) -> str:
    age_s = round(spec["age_h"] * 3600)
    columns: dict[str, Any] = {}
    if "usage_count" in spec:
        columns["usage_count"] = spec["usage_count"]
    if "last_used_h" in spec:
        columns["last_usage"] = clock.now - round(spec["last_used_h"] * 3600)
    if "generated_h" in spec:
        columns["generated_at"] = clock.now - round(spec["generated_h"] * 3600)
    texts = {k: spec[k] for k in ("raw", "summary") if k in spec}
    if spec.get("no_thread"):
        thread_id = spec.get("id") or home.uuid7(clock.now_ms - age_s * 1000)
        home.add_stage1_output(thread_id, source_updated_at=(clock.now_ms - age_s * 1000)
                               // 1000, raw_memory=texts.get("raw", "- orphan"),
                               rollout_summary=texts.get("summary", "Orphan."), **columns)
        return thread_id
    thread_id = seed_memory(home, age_s=age_s, thread_id=spec.get("id"),
                            memory_mode=spec.get("memory_mode", "enabled"), **texts, **columns)
    if spec.get("previously_selected"):
        [row] = home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs "
                           "WHERE thread_id = ?", (thread_id,))
        home.update_stage1_output(thread_id, selected_for_phase2=1,
                                  selected_for_phase2_source_updated_at=row["source_updated_at"])
    return thread_id


def seed_group(home: CodexHome, spec: dict[str, Any]) -> list[str]:
    """`count` enabled threads and their outputs, in two transactions: the first updated
    `age_h` ago, each next one a second later (one summary file name each: names carry the
    id's second and a 4-character hash, which collide among thousands of ids of one second)."""
    threads = home.add_threads(spec["count"], updated_ago_ms=round(spec["age_h"] * 3600) * 1000,
                               stagger_ms=1000)
    home.add_stage1_outputs([{"thread_id": t.id, "source_updated_at": t.updated_at_ms // 1000,
                              "raw_memory": f"- memory of {t.id}",
                              "rollout_summary": f"Summary of {t.id}.", "rollout_slug": "topic"}
                             for t in threads])
    return [t.id for t in threads]


def run_case(home: CodexHome, model: MockModel, run_startup: StartupRunner,
             clock: HarnessClock, case: dict[str, Any]) -> None:
    configure(home, case.get("config"))
    home.ensure_state_db()
    home.ensure_memories_db()
    groups = {spec["label"]: seed_group(home, spec) if "count" in spec
              else [seed(home, clock, spec)] for spec in case["memories"]}
    ids = {label: group[0] for label, group in groups.items() if len(group) == 1}
    agent_finishes(model)
    run_startup(home)
    expected = sorted((tid for label in case["selected"] for tid in groups[label]),
                      key=str.encode)
    assert raw_threads(home) == expected, f"{RAW} does not hold exactly the selected " \
        "threads in ascending thread-id order"
    if not expected and home.layout == "v1":
        assert (home.memory_root / RAW).read_text(encoding="utf-8") == EMPTY_RAW, \
            f"with nothing selected {RAW} is not exactly the no-raw-memories placeholder"
    files = summary_files(home)
    assert len(files) == len(expected), \
        f"{SUMMARIES}/ does not hold one summary file per selected thread"
    folder = home.memory_root / SUMMARIES
    for label in (label for label in case["selected"] if label in ids):
        assert any((folder / name).is_file() and ids[label] in (folder / name).read_text(
            encoding="utf-8") for name in files), \
            f"no summary file in {SUMMARIES}/ names the selected memory {label}"
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["status"] == "done", \
        "the startup's consolidation (the agent finishing at once) did not leave the job done"
    got = marks(home)
    for label, group in groups.items():
        selected = label in case["selected"]
        wrong = [tid for tid in group if tid in got and got[tid][0] != int(selected)]
        assert not wrong, f"{len(wrong)} of the {'selected' if selected else 'unselected'} " \
            f"memory {label} ({len(group)} outputs) have selected_for_phase2 = " \
            f"{int(not selected)} after the consolidation"


@check("p2.sel.select", title="a consolidation materialises the top-ranked eligible outputs "
       "of enabled threads, in thread-id order", rules=RULES, level="MUST", area="phase2")
@pytest.mark.parametrize("case", [c for c in CASES if not c.get("exact_clock")],
                         ids=[c["id"] for c in CASES if not c.get("exact_clock")])
def test_select(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                clock: HarnessClock, case: dict[str, Any]) -> None:
    run_case(home, model, run_startup, clock, case)


@check("p2.sel.bounds", title="the unused-days window includes its bound", rules="P2-SEL-01",
       level="SHOULD", area="phase2", needs=("clock.inject",))
@pytest.mark.parametrize("case", [c for c in CASES if c.get("exact_clock")],
                         ids=[c["id"] for c in CASES if c.get("exact_clock")])
def test_bounds(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                clock: HarnessClock, case: dict[str, Any]) -> None:
    run_case(home, model, run_startup, clock, case)


@check("p2.sel.refreshed-snapshot", title="a row refreshed after its selection is not marked "
       "as selected", rules="P2-SEL-03", level="MUST", area="phase2")
def test_refreshed_snapshot(home: CodexHome, model: MockModel, run_startup: StartupRunner
                            ) -> None:
    configure(home)
    kept = seed_memory(home, age_s=3 * 3600)
    refreshed = seed_memory(home, age_s=4 * 3600)

    [row] = home.query(home.memories_db, "SELECT source_updated_at FROM stage1_outputs WHERE "
                       "thread_id = ?", (refreshed,))

    def refresh() -> None:
        home.update_stage1_output(refreshed, source_updated_at=row["source_updated_at"] + 1)

    agent_finishes(model, message(DONE).probed(refresh))
    run_startup(home)
    got = marks(home)
    if kept not in got or refreshed not in got:
        fail("a seeded stage1_outputs row is gone after the consolidation")
    assert got[kept][0] == 1, "the untouched row was not marked selected_for_phase2 after the " \
        "consolidation"
    assert got[refreshed] == (0, None), "the row refreshed during the consolidation was marked " \
        "selected with its stale snapshot (selected_for_phase2, its source_updated_at)"

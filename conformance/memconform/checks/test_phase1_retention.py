"""RET: stale, unselected stage-1 outputs are pruned at startup, in bounded batches."""

from __future__ import annotations

import pytest

from memconform.checks.stage1 import configure, job
from memconform.clock import HarnessClock
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.registry import check

DAY_S = 86_400


def rows(home: CodexHome) -> set[str]:
    return {r["thread_id"] for r in home.query(home.memories_db,
                                               "SELECT thread_id FROM stage1_outputs")}


@check("p1.ret.prune", title="unselected rows unused for max_unused_days are pruned; selected "
       "and recently used rows stay", rules="RET-01", level="MUST", area="phase1")
def test_prune(home: CodexHome, run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    now = home.now_ms // 1000
    seeds = {
        "stale-unused": {"source_updated_at": now - 60 * DAY_S},
        "stale-used-long-ago": {"source_updated_at": now - 60 * DAY_S,
                                "last_usage": now - 40 * DAY_S, "usage_count": 4},
        "stale-but-selected": {"source_updated_at": now - 45 * DAY_S, "selected_for_phase2": 1,
                               "selected_for_phase2_source_updated_at": now - 45 * DAY_S},
        "old-but-used-recently": {"source_updated_at": now - 60 * DAY_S,
                                  "last_usage": now - DAY_S, "usage_count": 1},
        "fresh": {"source_updated_at": now - DAY_S},
    }
    for name, columns in seeds.items():
        home.add_stage1_output(name, raw_memory="r", rollout_summary="s", **columns)
        home.add_job("memory_stage1", name, status="done",
                     last_success_watermark=columns["source_updated_at"])
    run_startup(home)
    assert rows(home) == {"stale-but-selected", "old-but-used-recently", "fresh"}, \
        "the rows left are not exactly the selected, recently used and fresh ones"
    kept = sorted(name for name in seeds if job(home, name) is not None)
    assert kept == sorted(seeds), "pruning outputs deleted stage-1 job rows"


@check("p1.ret.configured-days", title="max_unused_days sets the pruning cutoff",
       rules=("RET-01", "CFG-01"), level="MUST", area="phase1")
def test_configured_days(home: CodexHome, run_startup: StartupRunner) -> None:
    configure(home, {"max_unused_days": 5})
    home.ensure_state_db()
    now = home.now_ms // 1000
    home.add_stage1_output("six-days", raw_memory="r", rollout_summary="s",
                           source_updated_at=now - 6 * DAY_S)
    home.add_stage1_output("four-days", raw_memory="r", rollout_summary="s",
                           source_updated_at=now - 4 * DAY_S)
    run_startup(home)
    assert rows(home) == {"four-days"}, \
        "with max_unused_days = 5 the six-day-old row was not the only one pruned"


@check("p1.ret.batch", title="one startup prunes at most 200 rows, oldest first",
       rules="RET-02", level="MUST", area="phase1")
@pytest.mark.parametrize("stale", [200, 201, 205], ids=["200-rows", "201-rows", "205-rows"])
def test_batch(home: CodexHome, run_startup: StartupRunner, stale: int) -> None:
    configure(home)
    home.ensure_state_db()
    now = home.now_ms // 1000
    for i in range(stale):
        home.add_stage1_output(f"t{i:03d}", raw_memory="r", rollout_summary="s",
                               source_updated_at=now - 100 * DAY_S + i * 60)
    run_startup(home)
    assert rows(home) == {f"t{i:03d}" for i in range(200, stale)}, \
        f"one startup did not prune exactly the 200 oldest of {stale} stale rows"
    run_startup(home)
    assert rows(home) == set(), \
        f"the next startup did not prune the {stale - 200} stale rows left"


# C5: two stale rows tied on a sort key of the batch's ranking (last use, else source time;
# then source time; then thread id; each oldest or lowest first), behind 199 older fillers, so
# the 200-row batch takes exactly one of them. case: the row pruned, then the row kept, each
# (name, source time, last use or None) with the times as offsets from now - 50 days (both
# stale under the default 30 days), then why.
TIES: dict[str, tuple[tuple[str, int, int | None], tuple[str, int, int | None], str]] = {
    "tie-broken-by-source-time": (("z-used-older-source", -10 * DAY_S, 0),
                                  ("a-unused", 0, None),
                                  "tied on last use (one row's, the other's source time): the "
                                  "older source time goes first, whatever the ids"),
    "tie-broken-by-thread-id": (("a-first", 0, None), ("b-second", 0, None),
                                "tied on both times: the lower thread id goes first"),
    "last-use-before-source-time": (("z-used-a-second-earlier", 10 * DAY_S, -1),
                                    ("a-unused", 0, None),
                                    "a last use one second older than the other's source "
                                    "time ranks first, though its own source time is newer"),
}


@check("p1.ret.batch-order", title="the 200-row batch ranks rows by last use (else source "
       "time), then source time, then thread id", rules="RET-02", level="MUST", area="phase1")
@pytest.mark.parametrize("case", sorted(TIES))
def test_batch_order(home: CodexHome, run_startup: StartupRunner, case: str) -> None:
    configure(home)
    home.ensure_state_db()
    now = home.now_ms // 1000
    tie = now - 50 * DAY_S
    home.add_stage1_outputs([{"thread_id": f"f{i:03d}", "raw_memory": "r",
                              "rollout_summary": "s",
                              "source_updated_at": now - 100 * DAY_S + i * 60}
                             for i in range(199)])
    first, second, why = TIES[case]
    for name, source, used in (first, second):
        home.add_stage1_output(name, raw_memory="r", rollout_summary="s",
                               source_updated_at=tie + source,
                               last_usage=None if used is None else tie + used,
                               usage_count=None if used is None else 1)
    run_startup(home)
    assert rows(home) == {second[0]}, \
        f"of 201 stale rows the batch of 200 did not leave exactly {second[0]}: {why}"


# name: (source_updated_at, last_usage, whether the row stays, what the row is). Times are
# offsets in seconds from the cutoff `now - max_unused_days * 86 400`; "ancient" is 60 days
# before now.
BOUND_ROWS: dict[str, tuple[int | str, int | None, bool, str]] = {
    "source-one-second-inside": (1, None, True, "never used, source time one second after the "
                                 "cutoff"),
    "source-at-cutoff": (0, None, True, "never used, source time exactly at the cutoff"),
    "source-one-second-past": (-1, None, False, "never used, source time one second before the "
                               "cutoff"),
    "last-use-at-cutoff": ("ancient", 0, True, "60 days old, last used exactly at the cutoff"),
    "last-use-one-second-past": ("ancient", -1, False, "60 days old, last used one second "
                                 "before the cutoff"),
}


@check("p1.ret.bound", title="a row is pruned only when its last use (else its source time) is "
       "before the cutoff, to the second", rules="RET-01", level="SHOULD", area="phase1",
       needs=("clock.inject",))
@pytest.mark.parametrize(("days", "advance_s"), [(5, 0), (5, 0.999), (0, 0)],
                         ids=["five-days", "five-days-now-at-999ms", "zero-days"])
def test_bound(home: CodexHome, run_startup: StartupRunner, clock: HarnessClock, days: int,
               advance_s: float) -> None:
    configure(home, {"max_unused_days": days})
    home.ensure_state_db()
    cutoff = clock.now - days * DAY_S
    for name, (source, used, _, _) in BOUND_ROWS.items():
        home.add_stage1_output(
            name, raw_memory="r", rollout_summary="s",
            source_updated_at=clock.now - 60 * DAY_S if source == "ancient"
            else cutoff + int(source), last_usage=None if used is None else cutoff + used,
            usage_count=None if used is None else 1)
    if advance_s:
        clock.advance(advance_s)  # now_ms = E + 999: now (rounded down) is the same second
    run_startup(home)
    left = rows(home)
    for name, (_, _, kept, what) in BOUND_ROWS.items():
        if kept:
            assert name in left, f"the row {what} (max_unused_days = {days}) was pruned: only " \
                "rows before the cutoff are stale"
        else:
            assert name not in left, f"the row {what} (max_unused_days = {days}) was not pruned"


@check("p1.ret.last-use-decides", title="a row's last use, when set, decides its age even when "
       "its source time is recent", rules="RET-01", level="MUST", area="phase1")
def test_last_use_decides(home: CodexHome, run_startup: StartupRunner) -> None:
    configure(home)
    home.ensure_state_db()
    now = home.now_ms // 1000
    home.add_stage1_output("fresh-source-stale-use", raw_memory="r", rollout_summary="s",
                           source_updated_at=now - DAY_S, last_usage=now - 60 * DAY_S,
                           usage_count=2)
    home.add_stage1_output("fresh", raw_memory="r", rollout_summary="s",
                           source_updated_at=now - DAY_S)
    run_startup(home)
    assert "fresh" in rows(home), "a row extracted yesterday and never used was pruned"
    assert "fresh-source-stale-use" not in rows(home), \
        "a row last used 60 days ago was kept because its source time is recent: " \
        "COALESCE(last_usage, source_updated_at) is the age that counts"

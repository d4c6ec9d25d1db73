"""CLOUD-GATE, CLOUD-CONT, CLOUD-LOG: which completed tasks become memories, what a memory
holds, and the extraction log (fixtures/cloud/gates.json, fixtures/cloud/redaction.json)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.cloud.client import Cloud
from memconform.cloud_checks.world import (
    GOAL,
    MONTH,
    NOW,
    RESULT,
    log_entry,
    memory_of,
    one_user,
    task_fields,
)
from memconform.registry import check
from memconform.resources import fixture_json

GATES = fixture_json("cloud", "gates.json")["cases"]
SECRETS = fixture_json("cloud", "redaction.json")["cases"]
MARK = "[REDACTED]"


@check("cloud.gate", title="a completed task is extracted only past the generate switch, the "
       "idle, duration and length gates, the external-context gate and the quota gate; force "
       "lifts only idle, duration and length", rules=(
           "CLOUD-GATE-01", "CLOUD-GATE-02", "CLOUD-GATE-03", "CLOUD-GATE-04", "CLOUD-GATE-05",
           "CLOUD-LOG-01"), level="MUST", area="cloud.extraction")
@pytest.mark.parametrize("case", GATES, ids=[c["id"] for c in GATES])
def test_gate(cloud: Cloud, case: dict[str, Any]) -> None:
    user = one_user(cloud, settings=case["settings"])
    parent = None
    if case["parent"]:
        parent = "parent"
        cloud.task(parent, **task_fields(kind=case["parent"]["kind"], status="completed",
                                         finished_at=NOW - 5000, started_at=NOW - 9000,
                                         result=""))
    cloud.task("t", **task_fields(parent_task_id=parent, **case["task"]))
    if case["flags"] is not None:
        reply = user.set_flags("t", case["flags"])
        assert reply.status_code == 200, f"owner's flags refused: {reply.text}"
    if case["quota"] == "fails":
        cloud.faults(quota_lookup=True)
    elif case["quota"]:
        quota = {"month": MONTH, **case["quota"]}
        cloud.quota("u", quota["month"], quota["limit_units"], quota["used_units"])
    if case["run"] == "worker":
        done = cloud.worker_round()
    else:
        reply = user.run(force=case["run"]["force"])
        assert reply.status_code == 200, f"manual run: {reply.status_code} {reply.text}"
        done = reply.json()
    memory, entry = memory_of(cloud, "t"), log_entry(user, "t")
    if case["outcome"] == "extracted":
        assert memory is not None, f"not extracted (log: {entry})"
        assert "t" in done["extracted"]
        assert entry is not None and entry["outcome"] == "extracted"
    elif case["outcome"] == "skipped":
        assert memory is None, "extracted"
        assert done["skipped"].get("t") == case["reason"], f"run answered {done}"
        assert entry is not None and (entry["outcome"], entry["reason"]) == (
            "skipped", case["reason"]), f"log entry {entry}"
    else:
        assert memory is None and entry is None, "a task that is not completed was considered"
        assert "t" not in done["extracted"] and "t" not in done["skipped"]


@check("cloud.gate.retried", title="a skipped task is tried again on a later sweep and its log "
       "entry is overwritten", rules=("CLOUD-GATE-06", "CLOUD-LOG-01"), level="MUST",
       area="cloud.extraction")
def test_retried(cloud: Cloud) -> None:
    user = one_user(cloud)
    cloud.task("t", **task_fields(finished_at=NOW - 100))
    assert cloud.worker_round()["skipped"] == {"t": "not_idle"}
    cloud.clock(NOW + 900)
    assert cloud.worker_round()["extracted"] == ["t"]
    assert [(e["task_id"], e["outcome"]) for e in user.log()] == [("t", "extracted")]


@check("cloud.content.shape", title="a memory is the goal's first line and the result's first "
       "800 characters, stored at project level under its task", rules=(
           "CLOUD-CONT-01", "CLOUD-CONT-03"), level="MUST", area="cloud.extraction")
@pytest.mark.parametrize(("goal", "prompt", "line"), [
    (GOAL, "Write the notes", "Publish the release notes"),
    ("   \n", "Draft the migration plan\nin two steps", "Draft the migration plan"),
    ("  Publish the release notes \t\nwith care", "Write the notes", "Publish the release notes")],
    ids=["goal-first-line", "prompt-when-no-goal", "first-line-trimmed"])
def test_content_shape(cloud: Cloud, goal: str, prompt: str, line: str) -> None:
    one_user(cloud)
    result = "é" * 790 + "abcdefghijklmnop"  # 806 characters, 1,596 bytes
    cloud.task("t", **task_fields(goal=goal, prompt=prompt, result=result))
    cloud.worker_round()
    memory = memory_of(cloud, "t")
    assert memory is not None, "not extracted"
    assert memory["content"] == f"{line}\n{result[:800]}"
    assert (memory["scope"], memory["project_id"], memory["user_id"]) == ("project", "p", None)


@check("cloud.content.redacted", title="secrets in a result become [REDACTED] in the memory",
       rules="CLOUD-CONT-02", level="MUST", area="cloud.extraction")
@pytest.mark.parametrize("case", SECRETS, ids=[c["id"] for c in SECRETS])
def test_redacted(cloud: Cloud, case: dict[str, Any]) -> None:
    one_user(cloud)
    cloud.task("t", **task_fields(result=case["result"] + " " + RESULT[:250]))
    cloud.worker_round()
    memory = memory_of(cloud, "t")
    assert memory is not None, "not extracted"
    assert case["secret"] not in memory["content"], "the secret was stored"
    assert MARK in memory["content"]


@check("cloud.content.plain-kept", title="text that only looks like a secret word stays",
       rules="CLOUD-CONT-02", level="SHOULD", area="cloud.extraction")
def test_plain_kept(cloud: Cloud) -> None:
    one_user(cloud)
    text = "The token bucket refills; password rules and secret santa are unchanged. " * 4
    cloud.task("t", **task_fields(result=text))
    cloud.worker_round()
    memory = memory_of(cloud, "t")
    assert memory is not None and memory["content"] == f"Publish the release notes\n{text}"


@check("cloud.content.once", title="a task is extracted once, however many sweeps follow",
       rules="CLOUD-CONT-03", level="MUST", area="cloud.extraction")
def test_once(cloud: Cloud) -> None:
    user = one_user(cloud)
    cloud.task("t", **task_fields())
    for _ in range(3):
        cloud.worker_round()
        assert user.run(force=True).status_code == 200
    assert len([m for m in cloud.memories() if m["source_task_id"] == "t"]) == 1


@check("cloud.content.project-only", title="extraction never writes a user-level memory",
       rules="CLOUD-CONT-03", level="MUST", area="cloud.extraction")
def test_project_only(cloud: Cloud) -> None:
    one_user(cloud)
    cloud.project("q", "u")
    cloud.task("t1", **task_fields())
    cloud.task("t2", **task_fields(project="q", goal="Tune the cache"))
    cloud.worker_round()
    found = {(m["source_task_id"], m["scope"], m["project_id"], m["user_id"])
             for m in cloud.memories()}
    assert found == {("t1", "project", "p", None), ("t2", "project", "q", None)}


@check("cloud.content.superseded", title="a newer result for the same goal supersedes the "
       "older memory of the project", rules="CLOUD-CONT-04", level="MUST",
       area="cloud.extraction")
@pytest.mark.parametrize("order", ["one-sweep", "older-extracted-later"])
def test_superseded(cloud: Cloud, order: str) -> None:
    user = one_user(cloud)
    cloud.task("old", **task_fields(result="first approach " * 20, finished_at=NOW - 5000,
                                    started_at=NOW - 6000))
    cloud.task("new", **task_fields(result="second approach " * 20))
    cloud.task("other", **task_fields(goal="Rotate the keys", result="rotation " * 30))
    if order == "older-extracted-later":  # the later finish wins, not the later extraction
        assert user.set_flags("old", {"generate": False}).status_code == 200
        assert sorted(cloud.worker_round()["extracted"]) == ["new", "other"]
        assert user.set_flags("old", {"generate": None}).status_code == 200
    cloud.worker_round()
    live = {m["source_task_id"]: m["superseded"] for m in cloud.memories()}
    assert live == {"old": True, "new": False, "other": False}


@check("cloud.log.bounded", title="the extraction log keeps one entry per task and at most 100 "
       "entries", rules="CLOUD-LOG-01", level="SHOULD", area="cloud.extraction")
def test_log_bounded(cloud: Cloud) -> None:
    user = one_user(cloud, settings=None)
    for number in range(105):
        cloud.task(f"t{number:03d}", **task_fields(finished_at=NOW - 2000 + number))
    cloud.worker_round()
    cloud.worker_round()
    entries = user.log()
    assert len(entries) == 100, f"{len(entries)} log entries"
    assert len({e["task_id"] for e in entries}) == 100
    assert all(e["reason"] == "generate_disabled" for e in entries)

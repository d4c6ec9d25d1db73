"""CLOUD-INJ: memories in a task's first turn, as the conformance API plays the turn."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.cloud.client import Cloud, User
from memconform.cloud_checks.world import GOAL, NOW, PROMPT, one_user, task_fields
from memconform.registry import check


def world(cloud: Cloud, *, use: bool | None = True, memories: int = 2) -> User:
    """User `u` (use_memories = `use`; None: never set) in project `p`, its queued task `t`,
    `memories` project memories and, with any, one user memory."""
    user = one_user(cloud, settings=None if use is None else {"use_memories": use})
    cloud.task("t", **task_fields(status="queued", started_at=None, finished_at=None,
                                  result=""))
    for number in range(memories):
        cloud.memory(scope="project", project_id="p", content=f"project fact {number}",
                     created_at=NOW - 100 + number)
    if memories:
        cloud.memory(scope="user", user_id="u", content="user fact", created_at=NOW - 50)
    return user


def assert_plain(turn: dict[str, Any]) -> None:
    assert turn["injected"] is False
    assert (turn["prompt"], turn["goal"]) == (PROMPT, GOAL), "the turn's input was changed"


@check("cloud.inject.first-turn", title="a first turn gets the user's and the project's "
       "memories after a reference-only preamble, before the original prompt and goal",
       rules=("CLOUD-INJ-01", "CLOUD-INJ-02"), level="MUST", area="cloud.injection")
def test_first_turn(cloud: Cloud) -> None:
    world(cloud)
    turn = cloud.turn("t", "first")
    assert turn["injected"] is True
    for field, original in (("prompt", PROMPT), ("goal", GOAL)):
        text = turn[field]
        assert text.endswith(original), f"the {field} does not end with the original"
        added = text[: -len(original)]
        for fact in ("project fact 0", "project fact 1", "user fact"):
            assert fact in added, f"{fact!r} missing from the {field}"
        preamble = added.split("project fact", 1)[0].split("user fact", 1)[0].lower()
        assert "reference" in preamble and "goal" in preamble, \
            f"no reference-only preamble before the memories: {preamble!r}"


@check("cloud.inject.not-other-turns", title="continuations, resumes and coordinator tasks get "
       "no memories", rules="CLOUD-INJ-01", level="MUST", area="cloud.injection")
@pytest.mark.parametrize("case", ["continuation", "resume", "coordinator"])
def test_not_other_turns(cloud: Cloud, case: str) -> None:
    world(cloud)
    if case == "coordinator":
        cloud.task("c", **task_fields(kind="coordinator", status="queued", result=""))
        assert_plain(cloud.turn("c", "first"))
    else:
        assert_plain(cloud.turn("t", case))
    assert cloud.audit() == []


@check("cloud.inject.switch", title="injection follows the task's use flag, else the user's "
       "use_memories", rules="CLOUD-INJ-03", level="MUST", area="cloud.injection")
@pytest.mark.parametrize(("user_use", "flag", "injected"), [
    (None, None, False), (False, None, False), (True, None, True), (False, True, True),
    (True, False, False)], ids=["default-off", "user-off", "user-on", "flag-on-beats-user",
                                "flag-off-beats-user"])
def test_switch(cloud: Cloud, user_use: bool | None, flag: bool | None,
                injected: bool) -> None:
    user = world(cloud, use=user_use)
    if flag is not None:
        reply = user.set_flags("t", {"use": flag})
        assert reply.status_code == 200, reply.text
    turn = cloud.turn("t", "first")
    assert turn["injected"] is injected
    if not injected:
        assert_plain(turn)


@check("cloud.inject.nothing-to-add", title="no memories, no injection and no audit event",
       rules="CLOUD-INJ-03", level="MUST", area="cloud.injection")
def test_nothing_to_add(cloud: Cloud) -> None:
    world(cloud, memories=0)
    assert_plain(cloud.turn("t", "first"))
    assert cloud.audit() == []


@check("cloud.inject.latest-five", title="the five newest memories of the user and the five "
       "newest of the project", rules="CLOUD-INJ-02", level="MUST",
       area="cloud.injection")
def test_latest_five(cloud: Cloud) -> None:
    world(cloud, memories=0)
    for number in range(7):
        cloud.memory(scope="project", project_id="p", content=f"project fact {number}.",
                     created_at=NOW - 100 + number)
        cloud.memory(scope="user", user_id="u", content=f"user fact {number}.",
                     created_at=NOW - 200 + number)
    prompt = cloud.turn("t", "first")["prompt"]
    for number in range(7):
        for kind in ("project", "user"):
            assert (f"{kind} fact {number}." in prompt) == (number >= 2), \
                f"{kind} fact {number} wrongly {'missing' if number >= 2 else 'injected'}"


@check("cloud.inject.no-superseded", title="a memory superseded by a newer result for the same "
       "goal is not injected", rules=("CLOUD-CONT-04", "CLOUD-INJ-02"), level="MUST",
       area="cloud.injection")
def test_no_superseded(cloud: Cloud) -> None:
    user = world(cloud, memories=0)
    user.settings(generate_memories=True)
    cloud.task("old", **task_fields(result="first approach " * 20, finished_at=NOW - 5000,
                                    started_at=NOW - 6000))
    cloud.task("new", **task_fields(result="second approach " * 20))
    assert sorted(cloud.worker_round()["extracted"]) == ["new", "old"]
    assert {m["source_task_id"]: m["superseded"] for m in cloud.memories()} == \
        {"old": True, "new": False}
    prompt = cloud.turn("t", "first")["prompt"]
    assert "second approach" in prompt, "the live memory was not injected"
    assert "first approach" not in prompt, "a superseded memory was injected"


@check("cloud.inject.stored-unchanged", title="the stored prompt and goal never change; a "
       "successful injection leaves one audit event", rules="CLOUD-INJ-04", level="MUST",
       area="cloud.injection")
def test_stored_unchanged(cloud: Cloud) -> None:
    world(cloud)
    assert cloud.turn("t", "first")["injected"] is True
    stored = cloud.stored_task("t")
    assert (stored["prompt"], stored["goal"]) == (PROMPT, GOAL)
    events = cloud.audit()
    assert [(e["user_id"], e["task_id"]) for e in events] == [("u", "t")], events


@check("cloud.inject.fail-open", title="a failure to read memories never blocks the task: the "
       "turn runs on the original input", rules="CLOUD-INJ-05", level="MUST",
       area="cloud.injection")
def test_fail_open(cloud: Cloud) -> None:
    world(cloud)
    cloud.faults(memory_lookup=True)
    assert_plain(cloud.turn("t", "first"))
    assert cloud.audit() == []

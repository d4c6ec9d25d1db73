"""CLOUD-AUTH: every public endpoint needs a user's token, and no user reaches another's
settings, flags, log, runs or memories."""

from __future__ import annotations

import pytest

from memconform.cloud.client import Cloud, User
from memconform.cloud_checks.world import GENERATE, NOW, log_entry, memory_of, task_fields
from memconform.registry import check

ENDPOINTS = [("GET", "/users/me/auto-memory-settings", None),
             ("PUT", "/users/me/auto-memory-settings", {"use_memories": True}),
             ("POST", "/tasks/t/auto-memory-flags", {"use": True}),
             ("POST", "/users/me/auto-memory/run", {"force": True}),
             ("GET", "/users/me/auto-memory-log", None)]


def two_users(cloud: Cloud) -> tuple[User, User]:
    """Alice in project `a`, Bob in project `b`, both generating and using memories; a
    shared project `s` where both may create tasks."""
    cloud.clock(NOW)
    users = []
    for name, project in (("alice", "a"), ("bob", "b")):
        user = cloud.user(name)
        user.settings(**GENERATE, use_memories=True)
        cloud.project(project, name)
        users.append(user)
    cloud.project("s", "alice", "bob")
    return users[0], users[1]


@check("cloud.auth.required", title="without a valid bearer token every public endpoint is a "
       "401 and changes nothing", rules="CLOUD-AUTH-01", level="MUST", area="cloud.authz")
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS,
                         ids=["get-settings", "put-settings", "flags", "run", "log"])
@pytest.mark.parametrize("token", [None, "Bearer not-a-token", "Basic dXNlcjpwdw=="],
                         ids=["none", "unknown", "basic"])
def test_required(cloud: Cloud, method: str, path: str, body: object,
                  token: str | None) -> None:
    owner = cloud.user("u")
    owner.settings(**GENERATE)
    cloud.project("p", "u")
    cloud.task("t", **task_fields())
    cloud.clock(NOW)
    headers = {"Authorization": token} if token else {}
    reply = cloud.http.request(method, path, json=body, headers=headers)
    assert reply.status_code == 401, f"{reply.status_code} {reply.text}"
    assert owner.get_settings().json()["use_memories"] is False
    assert memory_of(cloud, "t") is None and log_entry(owner, "t") is None


@check("cloud.auth.settings-isolated", title="one user's settings change nobody else's",
       rules="CLOUD-AUTH-02", level="MUST", area="cloud.authz")
def test_settings_isolated(cloud: Cloud) -> None:
    alice, bob = cloud.user("alice"), cloud.user("bob")
    alice.settings(use_memories=True, idle_seconds=5)
    assert bob.get_settings().json()["use_memories"] is False
    assert bob.get_settings().json()["idle_seconds"] == 900


@check("cloud.auth.flags-isolated", title="a user cannot set the flags of a task in a project "
       "they do not belong to", rules=("CLOUD-AUTH-02", "CLOUD-FLAG-02"), level="MUST",
       area="cloud.authz")
def test_flags_isolated(cloud: Cloud) -> None:
    _, bob = two_users(cloud)
    cloud.task("ta", **task_fields(project="a", user="alice"))
    reply = bob.set_flags("ta", {"generate": False})
    assert reply.status_code in (403, 404), f"{reply.status_code} {reply.text}"
    assert cloud.worker_round()["extracted"] == ["ta"], "an outsider's flag took effect"


@check("cloud.auth.runs-and-logs-isolated", title="a manual run touches only the caller's "
       "tasks and a log shows only the caller's", rules="CLOUD-AUTH-02", level="MUST",
       area="cloud.authz")
def test_runs_and_logs_isolated(cloud: Cloud) -> None:
    alice, bob = two_users(cloud)
    cloud.task("mine", **task_fields(project="a", user="alice"))
    cloud.task("theirs", **task_fields(project="b", user="bob"))
    assert alice.run().json()["extracted"] == ["mine"]
    assert memory_of(cloud, "theirs") is None, "a run extracted another user's task"
    assert bob.run().json()["extracted"] == ["theirs"]
    assert [e["task_id"] for e in alice.log()] == ["mine"]
    assert [e["task_id"] for e in bob.log()] == ["theirs"]


@check("cloud.auth.memories-stay-in-project", title="a project's memories are never injected "
       "into another project's tasks, and a user's own memories never into another user's",
       rules=("CLOUD-AUTH-02", "CLOUD-INJ-02"), level="MUST", area="cloud.authz")
def test_memories_stay(cloud: Cloud) -> None:
    two_users(cloud)
    cloud.task("done-a", **task_fields(project="a", user="alice", goal="Alpha secret plan"))
    cloud.worker_round()
    assert memory_of(cloud, "done-a") is not None
    cloud.memory(scope="user", user_id="alice", content="Alice private note",
                 created_at=NOW - 10)
    cloud.memory(scope="project", project_id="s", content="Shared project fact",
                 created_at=NOW - 10)
    for task, project in (("next-b", "b"), ("next-s", "s")):
        cloud.task(task, **task_fields(project=project, user="bob", status="queued",
                                       result="", started_at=None, finished_at=None))
    prompt_b = cloud.turn("next-b", "first")["prompt"]
    prompt_s = cloud.turn("next-s", "first")["prompt"]
    for prompt in (prompt_b, prompt_s):
        assert "Alpha secret plan" not in prompt, "project a's memory leaked"
        assert "Alice private note" not in prompt, "alice's user memory leaked"
    assert "Shared project fact" in prompt_s

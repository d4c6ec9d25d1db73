"""CLOUD-SET, CLOUD-FLAG: per-user settings and per-task flags over the public API
(fixtures/cloud/settings.json)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.cloud.client import Cloud
from memconform.cloud_checks.world import NOW, memory_of, one_user, task_fields
from memconform.registry import check
from memconform.resources import fixture_json

INVALID = fixture_json("cloud", "settings.json")["cases"]
DEFAULTS = {"generate_memories": False, "use_memories": False,
            "disable_on_external_context": True, "min_rate_limit_remaining_percent": 20,
            "idle_seconds": 900, "min_duration_seconds": 30, "min_result_chars": 200,
            "extract_model": None, "consolidation_model": None}
CHANGES = {"generate_memories": True, "use_memories": True,
           "disable_on_external_context": False, "min_rate_limit_remaining_percent": 0,
           "idle_seconds": 0, "min_duration_seconds": 3600, "min_result_chars": 5000,
           "extract_model": "extract-model-x", "consolidation_model": "consolidate-model-y"}


@check("cloud.settings.defaults", title="a new user's settings are all off, with the default "
       "thresholds", rules="CLOUD-SET-01", level="MUST", area="cloud.settings")
def test_defaults(cloud: Cloud) -> None:
    reply = cloud.user("u").get_settings()
    assert reply.status_code == 200
    assert reply.json() == DEFAULTS


@check("cloud.settings.change", title="each setting can be changed on its own; the others keep "
       "their values", rules="CLOUD-SET-02", level="MUST", area="cloud.settings")
@pytest.mark.parametrize("key", sorted(CHANGES))
def test_change(cloud: Cloud, key: str) -> None:
    user = cloud.user("u")
    others = {k: v for k, v in CHANGES.items() if k != key}
    assert user.settings(**others) == {**DEFAULTS, **others}
    assert user.settings(**{key: CHANGES[key]}) == {**DEFAULTS, **CHANGES}
    assert user.get_settings().json() == {**DEFAULTS, **CHANGES}


@check("cloud.settings.model-cleared", title="a model name set back to null is cleared",
       rules="CLOUD-SET-02", level="SHOULD", area="cloud.settings")
def test_model_cleared(cloud: Cloud) -> None:
    user = cloud.user("u")
    user.settings(extract_model="m1")
    assert user.settings(extract_model=None)["extract_model"] is None


@check("cloud.settings.invalid", title="an invalid value is refused with a 4xx and a message, "
       "and changes nothing", rules="CLOUD-SET-03", level="MUST", area="cloud.settings")
@pytest.mark.parametrize("case", INVALID, ids=[c["id"] for c in INVALID])
def test_invalid(cloud: Cloud, case: dict[str, Any]) -> None:
    user = cloud.user("u")
    before = user.settings(generate_memories=True, idle_seconds=120)
    reply = user.put_settings(case["body"])
    assert 400 <= reply.status_code < 500, f"{reply.status_code} {reply.text}"
    assert reply.text.strip(), "the refusal carries no message"
    assert user.get_settings().json() == before, "a refused update changed the settings"


@check("cloud.settings.not-json", title="a body that is not JSON is refused and changes "
       "nothing", rules="CLOUD-SET-03", level="MUST", area="cloud.settings")
def test_not_json(cloud: Cloud) -> None:
    user = cloud.user("u")
    reply = user.http.put("/users/me/auto-memory-settings", content=b"{idle_seconds: 5",
                          headers={"Authorization": f"Bearer {user.token}",
                                   "content-type": "application/json"})
    assert 400 <= reply.status_code < 500
    assert user.get_settings().json() == DEFAULTS


@check("cloud.flags.set", title="a user who may create tasks in the project sets a task's "
       "flags; null follows the user again", rules="CLOUD-FLAG-01", level="MUST",
       area="cloud.flags")
def test_flags_set(cloud: Cloud) -> None:
    user = one_user(cloud)
    cloud.task("t", **task_fields())
    reply = user.set_flags("t", {"use": True, "generate": False})
    assert reply.status_code == 200, reply.text
    assert (reply.json()["use"], reply.json()["generate"]) == (True, False)
    assert cloud.worker_round()["skipped"] == {"t": "generate_disabled"}
    reply = user.set_flags("t", {"generate": None})
    assert reply.status_code == 200 and reply.json()["use"] is True, "use was not kept"
    assert cloud.worker_round()["extracted"] == ["t"]


@check("cloud.flags.creator-only", title="a project member who may not create tasks cannot set "
       "a task's flags", rules="CLOUD-FLAG-02", level="MUST", area="cloud.flags")
def test_flags_creator_only(cloud: Cloud) -> None:
    one_user(cloud)
    viewer = cloud.user("v")
    cloud.project("shared", "u", viewers=("v",))
    cloud.task("t", **task_fields(project="shared"))
    reply = viewer.set_flags("t", {"generate": False})
    assert reply.status_code == 403, f"{reply.status_code} {reply.text}"
    assert cloud.worker_round()["extracted"] == ["t"], "the refused flag took effect"


@check("cloud.flags.unknown-task", title="flags for a task that does not exist are a 404",
       rules="CLOUD-FLAG-02", level="SHOULD", area="cloud.flags")
def test_flags_unknown_task(cloud: Cloud) -> None:
    user = one_user(cloud)
    assert user.set_flags("nope", {"use": True}).status_code == 404


@check("cloud.flags.invalid", title="a flags body with a wrong type or an unknown field is "
       "refused and changes nothing", rules="CLOUD-FLAG-01", level="MUST", area="cloud.flags")
@pytest.mark.parametrize("body", [{"use": "yes"}, {"generate": 0}, {"remember": True}, [True]],
                         ids=["text-for-use", "number-for-generate", "unknown-field",
                              "not-an-object"])
def test_flags_invalid(cloud: Cloud, body: Any) -> None:
    user = one_user(cloud)
    cloud.task("t", **task_fields())
    reply = user.set_flags("t", body)
    assert 400 <= reply.status_code < 500, f"{reply.status_code} {reply.text}"
    assert cloud.worker_round()["extracted"] == ["t"]


@check("cloud.run.manual", title="a manual run sweeps only the caller's tasks and answers what "
       "it extracted and skipped", rules="CLOUD-RUN-01", level="MUST", area="cloud.flags")
def test_manual_run(cloud: Cloud) -> None:
    user = one_user(cloud)
    cloud.task("ready", **task_fields())
    cloud.task("fresh", **task_fields(finished_at=NOW - 5))
    reply = user.run()
    assert reply.status_code == 200
    assert reply.json() == {"extracted": ["ready"], "skipped": {"fresh": "not_idle"}}
    assert memory_of(cloud, "ready") is not None

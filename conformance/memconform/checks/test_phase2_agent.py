"""AGENT: the consolidation agent's request, its confinement to the memory root, and its
isolation from the memories pipeline it serves."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.checks.consolidation import (
    DIFF_FILE,
    add_file,
    agent_finishes,
    agent_patches,
    committed_files,
    configure,
    consolidations,
    expire_cooldown,
    global_job,
    one_memory_run,
    seed_memory,
    status,
)
from memconform.checks.stage1 import VALID_OUTPUT, assert_now
from memconform.clock import HarnessClock
from memconform.codex import releases
from memconform.fixtures import StartupRunner
from memconform.home import CodexHome
from memconform.mockmodel import (
    ARTIFACTS,
    MockModel,
    Recorded,
    custom_tool_call,
    function_call,
    json_output,
)
from memconform.registry import check
from memconform.schemas import request_problems
from memconform.verdicts import fail, produced

MARKER_RAW = "- marker raw memory 7f3a"
MARKER_SUMMARY = "marker memory summary 91c2"
ESCAPED = "escaped by the agent 5d1e"


def first_request(model: MockModel) -> Recorded:
    requests = model.of_kind("consolidation")
    assert requests, "the startup sent no consolidation agent request to the model"
    return requests[0]


def body_of(request: Recorded) -> dict[str, Any]:
    body = request.body
    if not isinstance(body, dict):
        fail("the consolidation agent's request body is not a JSON object")
    return body


def input_text(request: Recorded) -> str:
    return json.dumps(body_of(request).get("input"))


def tool_names(request: Recorded, *keys: str) -> list[str]:
    """The names the request's tools are offered under (the first of `keys` each has)."""
    tools = body_of(request).get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        fail("the consolidation agent's request has a tools field that is not a list of objects")
    return [str(next((t[k] for k in keys if t.get(k)), "")) for t in tools]


def tool_results(model: MockModel) -> list[dict[str, Any]]:
    """The tool outputs sent back to the model for the agent's apply_patch call."""
    return [i for r in model.of_kind("consolidation") for i in body_of(r).get("input") or []
            if isinstance(i, dict) and i.get("call_id") == "call_patch"
            and str(i.get("type", "")).endswith("_output")]


@check("p2.agent.request", title="the agent's request is marked as memory consolidation, asks "
       "for medium reasoning, and names the memory root and the diff file",
       rules="AGENT-01", level="MUST", area="phase2")
def test_request(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, raw=MARKER_RAW)
    agent_finishes(model)
    run_startup(home)
    request = first_request(model)
    assert request.headers.get("x-openai-subagent") == "memory_consolidation", \
        "the agent's request is not marked x-openai-subagent: memory_consolidation"
    reasoning = body_of(request).get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    assert effort == "medium", "the agent's request does not ask for medium reasoning effort"
    text = input_text(request)
    assert str(home.memory_root) in text, "the agent's prompt does not name the memory root"
    assert DIFF_FILE in text, f"the agent's prompt does not point at {DIFF_FILE}"
    assert "v1" in text, "the agent's prompt does not ask for the v1 summary header"


@check("p2.agent.no-inlined-memories", title="memories are not inlined into the agent's "
       "prompt: it reads them from the files", rules="AGENT-01", level="MUST", area="phase2")
def test_no_inlined_memories(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home, raw=MARKER_RAW)
    agent_finishes(model)
    run_startup(home)
    assert MARKER_RAW not in first_request(model).text, \
        "the seeded raw memory is inlined into the agent's request"


@check("p2.agent.model", title="the agent uses memories.consolidation_model, else the "
       "release's consolidation default (gpt-5.4 in 0.144.6)", rules="AGENT-01",
       level="SHOULD", area="phase2")
@pytest.mark.parametrize("configured", [None, "override.phase-two"], ids=["default", "override"])
def test_model(impl: Adapter, home: CodexHome, model: MockModel, run_startup: StartupRunner,
               configured: str | None) -> None:
    default = releases.get(impl.handshake.follows[0]).consolidation_model
    configure(home, {"consolidation_model": configured} if configured else {})
    seed_memory(home)
    agent_finishes(model)
    run_startup(home)
    assert body_of(first_request(model)).get("model") == (configured or default), \
        "the agent's request does not use the expected model (" + (
            "memories.consolidation_model" if configured else
            f"{default}, the default of the release the implementation follows") + ")"


# `consolidation_service_tier` -> the `service_tier` consolidation requests carry (None: none)
SERVICE_TIERS = {"flex": "flex", "priority": "priority", "bogus": None, "unset": None}


@check("p2.agent.service-tier", title="consolidation_service_tier flex or priority is sent as "
       "service_tier on consolidation requests, never on extraction; other values are dropped",
       rules="AGENT-05", level="SHOULD", area="phase2", codex_since="0.171.0")
@pytest.mark.parametrize("tier", list(SERVICE_TIERS))
def test_service_tier(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      tier: str) -> None:
    configure(home, {} if tier == "unset" else {"consolidation_service_tier": tier})
    thread = home.add_thread()
    model.on("stage1", json_output({"raw_memory": "- a fact", "rollout_summary": "A session.",
                                    "rollout_slug": "s"}))
    agent_finishes(model)
    run_startup(home)
    extractions = model.of_kind("stage1")
    assert extractions and thread.id in json.dumps(extractions[0].body), \
        "the seeded thread was not extracted"
    assert all("service_tier" not in body_of(r) for r in extractions), \
        "an extraction request carries service_tier"
    sent = {body_of(r).get("service_tier", "<absent>") for r in model.of_kind("consolidation")}
    expected = SERVICE_TIERS[tier] or "<absent>"
    assert sent == {expected}, f"with consolidation_service_tier {tier}, the consolidation " \
        f"requests do not all carry service_tier {expected}"


NETWORK_TOOLS = ("web_search", "web_fetch", "fetch", "http", "browser")


@check("p2.agent.no-network-tools", title="the agent is offered no web or network tool",
       rules="AGENT-02", level="SHOULD", area="phase2")
def test_no_network_tools(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup)
    names = tool_names(first_request(model), "name", "type")
    assert [n for n in names if any(w in n.lower() for w in NETWORK_TOOLS)] == [], \
        "the consolidation agent is offered web or network tools"


@check("p2.agent.writes-land", title="files the agent writes with apply_patch become the new "
       "baseline", rules=("AGENT-04", "GIT-04"), level="MUST", area="phase2")
def test_writes_land(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    summary = "".join(f"+{line}\n" for line in ARTIFACTS["memory_summary.md"].splitlines())
    patch = ("*** Begin Patch\n*** Add File: MEMORY.md\n+# Memory\n+- tabs\n"
             f"*** Add File: memory_summary.md\n{summary}*** End Patch\n")
    agent_patches(model, patch)
    run_startup(home)
    first_request(model)
    root = home.memory_root
    assert produced(root / "MEMORY.md", "MEMORY.md (the agent's patch adds it)") == \
        "# Memory\n- tabs\n", "MEMORY.md does not hold what the agent's patch wrote"
    assert produced(root / "memory_summary.md", "memory_summary.md (the agent's patch adds it)") \
        .startswith("v1\n"), "memory_summary.md does not hold what the agent's patch wrote"
    if not (root / ".git").is_dir():
        fail("the memory root has no git baseline (.git) after the consolidation")
    assert {"MEMORY.md", "memory_summary.md"} <= set(committed_files(root)), \
        "the new baseline commit does not hold the files the agent wrote"
    assert status(root) == "", \
        "the memory root has changes the baseline commit does not hold (git status)"
    assert tool_results(model), "the apply_patch call's result was not sent back to the model"


def outside_targets(home: CodexHome) -> dict[str, tuple[str, Path]]:
    """name: (patch path as the agent writes it, file that must not appear or change)."""
    work = Path(f"{home.path}-work")
    return {
        "parent-dir": ("../escaped.md", home.path / "escaped.md"),
        "absolute-home": (str(home.path / "escaped.md"), home.path / "escaped.md"),
        "session-cwd": (str(work / "escaped.md"), work / "escaped.md"),
        "git-dir": (".git/hooks/post-commit", home.memory_root / ".git/hooks/post-commit"),
        "symlinked-dir": ("linked/escaped.md", home.path / "elsewhere" / "escaped.md"),
        "codex-config": ("../config.toml", home.path / "config.toml"),
    }


@check("p2.agent.confined", title="the agent cannot write outside the memory root, through a "
       "symlink, or into .git; the model is told", rules="AGENT-02", level="MUST",
       area="phase2")
@pytest.mark.parametrize("case", ["parent-dir", "absolute-home", "session-cwd", "git-dir",
                                  "symlinked-dir", "codex-config"])
def test_confined(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                  case: str) -> None:
    configure(home)
    seed_memory(home)
    target_path, target = outside_targets(home)[case]
    (home.path / "elsewhere").mkdir()
    home.memory_root.mkdir(parents=True, exist_ok=True)
    os.symlink(home.path / "elsewhere", home.memory_root / "linked")
    Path(f"{home.path}-work").mkdir(exist_ok=True)
    before = target.read_bytes() if target.exists() else b""
    if case == "codex-config":
        first = before.decode().splitlines()[0] if before else ""
        patch = (f"*** Begin Patch\n*** Update File: {target_path}\n@@\n-{first}\n+{ESCAPED}\n"
                 "*** End Patch\n")
    else:
        patch = add_file(target_path, ESCAPED)
    seen: list[bytes] = []
    agent_patches(model, patch, then=lambda: seen.append(
        target.read_bytes() if target.exists() else b""))
    run_startup(home)
    first_request(model)
    assert seen, "the agent's apply_patch call got no tool result (the agent never went on)"
    told = tool_results(model)
    assert told, "the refused apply_patch call's result was not sent back to the model"
    assert all(i.get("output") for i in told), \
        "the refused apply_patch call's result sent back to the model is empty"
    # the patch's own text is what must not appear (an implementation may legitimately
    # touch files such as config.toml for its own reasons)
    assert ESCAPED.encode() not in seen[0], \
        f"the agent's patch to {target_path} wrote {target}, outside what it may write"
    assert ESCAPED.encode() not in (target.read_bytes() if target.exists() else b""), \
        f"{target} holds the agent's text after the run"


def rollouts_mentioning(home: CodexHome, needle: str) -> list[Path]:
    sessions = home.path / "sessions"
    if not sessions.is_dir():
        return []
    return [p for p in sessions.rglob("*.jsonl") if needle in p.read_text(errors="replace")]


@check("p2.agent.no-rollout", title="the agent's session writes no rollout and no thread row",
       rules="AGENT-03", level="MUST", area="phase2")
def test_no_rollout(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seeded = seed_memory(home)
    agent_finishes(model)
    session = run_startup(home).get("session_thread_id")
    first_request(model)
    assert rollouts_mentioning(home, DIFF_FILE) == [], \
        "a rollout file under sessions/ recorded the consolidation agent's session"
    rows = {r["id"] for r in home.query(home.state_db, "SELECT id FROM threads")}
    extra = sorted(rows - {seeded, session})
    assert extra == [], \
        "the state database has thread rows beyond the seeded thread and the session's own"


@check("p2.agent.not-a-candidate", title="a later startup never extracts the agent's own "
       "session", rules="AGENT-03", level="MUST", area="phase2")
def test_not_a_candidate(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup)
    first_request(model)  # control: the agent did run, so there is a session to leave alone
    expire_cooldown(home)
    # age every thread past the one-hour idle threshold, so an agent thread would qualify
    home.execute(home.state_db, "UPDATE threads SET updated_at_ms = updated_at_ms - 7200000,"
                 " updated_at = updated_at - 7200, recency_at_ms = recency_at_ms - 7200000,"
                 " recency_at = recency_at - 7200")
    model.reset()
    model.on("stage1", json_output(VALID_OUTPUT))
    agent_finishes(model)
    run_startup(home)
    assert [r for r in model.of_kind("stage1") if DIFF_FILE in r.text] == [], \
        "a later startup sent the consolidation agent's session for extraction"


@check("p2.agent.memories-off-inside", title="the agent's prompt carries no injected memory "
       "and offers no memory tools", rules="AGENT-03", level="MUST", area="phase2")
def test_memories_off_inside(home: CodexHome, model: MockModel,
                             run_startup: StartupRunner) -> None:
    configure(home, top={"features": {"memories": True}})
    seed_memory(home)
    home.memory_root.mkdir(parents=True)
    (home.memory_root / "memory_summary.md").write_text(f"v1\n{MARKER_SUMMARY}\n")
    agent_finishes(model)
    run_startup(home)
    request = first_request(model)
    assert MARKER_SUMMARY not in request.text, \
        "memory_summary.md was injected into the consolidation agent's request"
    names = tool_names(request, "name")
    assert [n for n in names if "memor" in n.lower()] == [], \
        "the consolidation agent is offered memory tools"


@check("p2.agent.one-conversation", title="one consolidation runs one agent conversation",
       rules="AGENT-04", level="MUST", area="phase2")
def test_one_conversation(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    one_memory_run(home, model, run_startup)
    assert consolidations(model) == 1, \
        "one consolidation did not run exactly one agent conversation"
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["status"] == "done", "the consolidation did not leave its job done"




@check("p2.agent.cache-key", title="the requests of one consolidation share one "
       "prompt_cache_key, the agent thread's UUIDv7 made at the run", rules="AGENT-01",
       level="SHOULD", area="phase2")
def test_cache_key(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                   clock: HarnessClock) -> None:
    configure(home)
    seed_memory(home)
    agent_patches(model, add_file("notes.md", "A note."))
    run_startup(home)
    requests = model.of_kind("consolidation")
    if len(requests) < 2:
        fail("the consolidation agent did not send a second request after its tool call",
             expected=2, actual=len(requests))
    keys = [r.body.get("prompt_cache_key") if isinstance(r.body, dict) else None
            for r in requests]
    assert len(set(keys)) == 1, "the requests of one consolidation carry different " \
        "prompt_cache_key values (one agent thread, one key)"
    try:
        key = uuid.UUID(str(keys[0]))
    except ValueError:
        fail("the consolidation requests' prompt_cache_key is not a UUID (the agent thread's "
             "id)", actual=keys[0])
    assert key.version == 7 and key.variant == uuid.RFC_4122, \
        "the consolidation requests' prompt_cache_key is not an RFC 9562 UUIDv7"
    assert_now((key.int >> 80) // 1000, clock, "the time inside the prompt_cache_key UUIDv7 "
               "(the agent thread is made during the run)")


@check("p2.agent.request-fields", title="every consolidation request is a valid Responses API "
       "request: no unknown parameter, no value outside a parameter's enumeration",
       rules="AGENT-01", level="MUST", area="phase2")
def test_request_fields(home: CodexHome, model: MockModel, run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    agent_patches(model, add_file("notes.md", "A note."))
    run_startup(home)
    requests = model.of_kind("consolidation")
    if not requests:
        fail("the consolidation agent sent no request")
    for number, request in enumerate(requests, 1):
        found = request_problems(request.body)
        if found:
            fail(f"consolidation request {number} is not a valid Responses API request (the "
                 "API answers 400 to an unknown parameter or value): " + "; ".join(found[:5]))


@check("p2.agent.unknown-tool", title="a call to a tool the agent was not offered is answered "
       "with an error output and the consolidation goes on", rules="AGENT-02", level="SHOULD",
       area="phase2")
@pytest.mark.parametrize("kind", ["function", "custom"])
def test_unknown_tool(home: CodexHome, model: MockModel, run_startup: StartupRunner,
                      kind: str) -> None:
    configure(home)
    seed_memory(home)
    name = "memconform_no_such_tool"
    call = function_call(name, "{}", "call_patch") if kind == "function" else \
        custom_tool_call(name, "anything", "call_patch")
    agent_patches(model, "", first=call)
    run_startup(home)
    results = tool_results(model)
    if not results:
        fail(f"the agent's call to the unknown tool {name} got no output item back")
    output = results[0].get("output")
    assert isinstance(output, str) and output.strip(), \
        f"the output for the unknown tool {name} is not a non-empty text"
    job = global_job(home)
    assert job is not None and job["status"] == "done", \
        "the consolidation did not finish after the agent called an unknown tool " \
        f"(job: {job and job['status']}, last_error: {job and job['last_error']})"


@check("p2.job.worker-is-the-session", title="the consolidation job records the claiming "
       "session's thread as its worker", rules="P2-JOB-01", level="SHOULD", area="phase2")
def test_worker_is_the_session(home: CodexHome, model: MockModel,
                               run_startup: StartupRunner) -> None:
    configure(home)
    seed_memory(home)
    agent_finishes(model)
    session = run_startup(home).get("session_thread_id")
    if not session:
        fail("the startup of a root session reported no session_thread_id")
    job = global_job(home)
    if job is None:
        fail("the startup ran no consolidation: there is no memory_consolidate_global job row")
    assert job["worker_id"] == session, "the consolidation job's worker_id is not the thread " \
        "id of the session whose startup claimed it"

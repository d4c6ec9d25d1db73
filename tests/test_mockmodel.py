"""The mock Responses API: classification, SSE shape, scripting, gates and recording."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform import mockmodel as mm
from memref.config import Provider
from memref.responses import ModelError, stream_response

STAGE1_BODY = {"model": "m", "stream": True, "input": [],
               "text": {"format": {"type": "json_schema", "name": "codex_output_schema",
                                   "strict": True, "schema": {}}}}


@pytest.fixture
def mock() -> Iterator[mm.MockModel]:
    server = mm.start_server()
    try:
        yield mm.MockModel(server)
    finally:
        server.clear()
        server.stop()


def send(mock: mm.MockModel, body: dict[str, Any], headers: dict[str, str] | None = None,
         timeout_s: float = 10) -> Any:
    provider = Provider(name="mock", base_url=mock.base_url, env_key="K")
    return stream_response(provider, body, env={"K": "secret"}, headers=headers,
                           timeout_s=timeout_s)


def test_classifies_stage1_consolidation_and_main(mock: mm.MockModel) -> None:
    send(mock, STAGE1_BODY)
    send(mock, {"model": "m", "input": []}, headers={"x-openai-subagent": "memory_consolidation"})
    send(mock, {"model": "m", "input": []})
    assert [r.kind for r in mock.requests] == ["stage1", "consolidation", "main"]
    assert mock.requests[0].headers["authorization"] == "Bearer secret"
    assert mock.requests[0].body["text"]["format"]["type"] == "json_schema"


def test_script_answers_by_kind_and_records_the_reply_shape(mock: mm.MockModel) -> None:
    mock.on("stage1", mm.json_output({"raw_memory": "r", "rollout_summary": "s",
                                      "rollout_slug": None}))
    reply = send(mock, STAGE1_BODY)
    assert reply.output_text() == '{"raw_memory": "r", "rollout_summary": "s", ' \
                                  '"rollout_slug": null}'
    assert reply.usage["total_tokens"] == 15
    assert send(mock, {"input": []}).output_text() == "mock default reply"


def test_replies_are_consumed_in_order_then_repeat_or_fall_through(mock: mm.MockModel) -> None:
    mock.on("main", mm.message("one"), mm.message("two"))
    assert [send(mock, {"input": []}).output_text() for _ in range(3)] == ["one", "two", "two"]
    mock.reset()
    mock.on("main", mm.message("once"), repeat_last=False)
    assert [send(mock, {"input": []}).output_text() for _ in range(2)] == \
        ["once", "mock default reply"]


def test_matching_on_substring_and_tool_output(mock: mm.MockModel) -> None:
    mock.on(None, mm.message("after tool"), has_tool_output=True)
    mock.on(None, mm.function_call("exec_command", {"cmd": "ls"}, call_id="c1"),
            contains="please list")
    first = send(mock, {"input": [{"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "please list"}]}]})
    assert first.items[0]["type"] == "function_call"
    assert first.items[0]["arguments"] == '{"cmd": "ls"}'
    assert first.items[0]["call_id"] == "c1"
    second = send(mock, {"input": [{"type": "function_call_output", "call_id": "c1",
                                    "output": "ok"}]})
    assert second.output_text() == "after tool"


def test_custom_tool_call_and_several_items(mock: mm.MockModel) -> None:
    mock.on("main", mm.items(mm.message("a"), mm.custom_tool_call("apply_patch", "*** Begin")))
    reply = send(mock, {"input": []})
    assert [i["type"] for i in reply.items] == ["message", "custom_tool_call"]
    assert reply.items[1]["input"] == "*** Begin"


def test_http_error_and_response_failed_are_model_errors(mock: mm.MockModel) -> None:
    mock.on("main", mm.http_error(500, "overloaded"), mm.failed("boom"))
    with pytest.raises(ModelError, match=r"HTTP 500.*overloaded"):
        send(mock, {"input": []})
    with pytest.raises(ModelError, match=r"response\.failed: boom"):
        send(mock, {"input": []})


def test_gate_holds_a_reply_until_released(mock: mm.MockModel) -> None:
    gate = mm.Gate(timeout_s=10)
    mock.on("main", mm.message("released").held(gate))
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(send(mock, {"input": []})
                                                            .output_text()))
    worker.start()
    time.sleep(0.3)
    assert results == [], "the gated reply was sent before release"
    send(mock, STAGE1_BODY)  # other requests are not blocked by the gate
    gate.release()
    worker.join(timeout=10)
    assert results == ["released"]
    assert not gate.timed_out


def test_delay_is_applied(mock: mm.MockModel) -> None:
    mock.on("main", mm.message("slow").after(0.3))
    started = time.monotonic()
    send(mock, {"input": []})
    assert time.monotonic() - started >= 0.3


def test_unknown_rule_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        mm.Rule([mm.message("x")], kind="bogus")


def test_probe_runs_before_the_answer_and_its_errors_are_kept(mock: mm.MockModel) -> None:
    seen: list[int] = []

    def probe() -> None:
        seen.append(len(mock.requests))
        if len(seen) == 2:
            raise OSError("probe broke")

    mock.on("main", mm.message("ok").probed(probe))
    assert send(mock, {"input": []}).output_text() == "ok"
    assert send(mock, {"input": []}).output_text() == "ok"
    assert seen == [1, 2]
    assert mock.probe_errors == ["OSError: probe broke"]
    mock.reset()
    assert mock.probe_errors == []


CONSOLIDATION = {"x-openai-subagent": "memory_consolidation"}


def test_agent_writes_missing_artifacts_before_finishing(mock: mm.MockModel,
                                                         tmp_path: Path) -> None:
    seen: list[int] = []
    mock.on("consolidation", mm.message("done").probed(lambda: seen.append(len(seen))))
    (tmp_path / "MEMORY.md").write_text("kept\n", encoding="utf-8")
    mock.agent_artifacts = tmp_path
    [call] = send(mock, {"input": []}, headers=CONSOLIDATION).items
    assert (call["type"], call["name"], call["call_id"]) == \
        ("custom_tool_call", "apply_patch", mm.ARTIFACTS_CALL_ID)
    assert call["input"].startswith("*** Begin Patch\n*** Add File: memory_summary.md\n+v1\n")
    assert "MEMORY.md" not in call["input"], "an existing artifact was overwritten"
    assert mock.artifacts_written == {"memory_summary.md"}
    assert seen == [0], "the final answer's probe did not run when the agent first finished"
    answered = {"input": [{"type": "custom_tool_call_output", "call_id": mm.ARTIFACTS_CALL_ID,
                           "output": "ok"}]}
    assert send(mock, answered, headers=CONSOLIDATION).output_text() == "done"
    assert seen == [0], "the probe ran twice"
    mock.agent_artifacts = None
    assert send(mock, {"input": []}, headers=CONSOLIDATION).output_text() == "done"
    assert seen == [0, 1]


def test_agent_artifacts_wait_for_tool_calls_and_spare_failures(mock: mm.MockModel,
                                                                tmp_path: Path) -> None:
    mock.agent_artifacts = tmp_path
    mock.on("consolidation", mm.custom_tool_call("apply_patch", "x", "call_patch"),
            has_tool_output=False)
    mock.on("consolidation", mm.failed("boom"), has_tool_output=True)
    [call] = send(mock, {"input": []}, headers=CONSOLIDATION).items
    assert call["call_id"] == "call_patch", "the agent's own call was replaced"
    with pytest.raises(ModelError):
        send(mock, {"input": [{"type": "custom_tool_call_output", "call_id": "call_patch",
                               "output": "ok"}]}, headers=CONSOLIDATION)
    assert mock.artifacts_written == set()
    (tmp_path / "MEMORY.md").write_text("", encoding="utf-8")
    (tmp_path / "memory_summary.md").write_text("v2\n", encoding="utf-8")
    mock.reset()
    mock.on("consolidation", mm.message("done"))
    assert send(mock, {"input": []}, headers=CONSOLIDATION).output_text() == "done", \
        "artifacts were written over files the agent already left"


def test_stage1_answers_are_fitted_to_a_schema_without_raw_memory(mock: mm.MockModel) -> None:
    v2 = {**STAGE1_BODY, "text": {"format": {
        "type": "json_schema", "name": "codex_output_schema", "strict": True,
        "schema": {"properties": {"rollout_summary": {}, "rollout_slug": {}}}}}}
    answer = {"raw_memory": "m", "rollout_summary": "s", "rollout_slug": None, "extra": 1}
    mock.on("stage1", mm.json_output(answer), repeat_last=True)
    assert json.loads(send(mock, v2).output_text()) == {
        "rollout_summary": "s", "rollout_slug": None, "extra": 1}
    assert json.loads(send(mock, STAGE1_BODY).output_text()) == answer  # no properties given
    mock.reset()
    mock.on("stage1", mm.json_output(answer, exact=True))
    assert json.loads(send(mock, v2).output_text()) == answer

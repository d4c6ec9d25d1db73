"""The Codex adapter's parts: call grouping, tool results, the front, the binary locator, and
a short run of the suite against the real binary (when MEMCONFORM_CODEX_BIN is set)."""

from __future__ import annotations

import http.client
import json
import os
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import run_cli, statuses
from memconform import mockmodel as mm
from memconform.codex.adapter import _independent_groups, _tool_result
from memconform.codex.binary import BIN_ENV, CodexBinaryError, locate
from memconform.codex.front import Front, Turn


def call(name: str, **args: object) -> dict[str, str]:
    return {"name": name, "arguments": json.dumps(args)}


def test_groups_keep_order_where_it_matters() -> None:
    note_a = call("add_ad_hoc_note", filename="a.md", note="1")
    note_b = call("add_ad_hoc_note", filename="b.md", note="2")
    read = call("read", path="MEMORY.md")
    calls = [read, read, note_a, note_b, note_a, read, {"name": "list", "arguments": "{bad"}]
    assert _independent_groups(calls) == [[read, read], [note_a, note_b], [note_a],
                                          [read, calls[-1]]]


def test_tool_output_is_an_object_or_a_refusal() -> None:
    assert _tool_result('{"entries": []}') == {"output": {"entries": []}}
    assert _tool_result("{}") == {"output": {}}
    assert _tool_result("path 'x' was not found") == {"error": "path 'x' was not found"}
    assert _tool_result("[1]") == {"error": "[1]"}
    assert _tool_result("") == {"error": "(empty output)"}


def post(url: str, body: Mapping[str, object], headers: dict[str, str] | None = None) -> str:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.request("POST", parts.path + "/responses", body=json.dumps(body),
                 headers={"content-type": "application/json", **(headers or {})})
    text = conn.getresponse().read().decode()
    conn.close()
    return text


def test_front_holds_the_turn_and_passes_the_pipeline_through() -> None:
    server = mm.start_server()
    front = Front()
    try:
        mock = mm.MockModel(server)
        mock.on("stage1", mm.json_output({"raw_memory": "from the mock"}))
        turn = Turn([[mm.message_item("scripted answer")]])
        front.begin(mock.base_url, turn)
        stage1 = {"text": {"format": {"type": "json_schema"}}, "input": []}
        assert "from the mock" in post(front.url, stage1)
        assert [r.kind for r in mock.requests] == ["stage1"]
        answers: list[str] = []
        worker = threading.Thread(target=lambda: answers.append(post(front.url, {"input": []})))
        worker.start()
        assert turn.arrived.wait(10)
        worker.join(0.3)
        assert answers == [], "the turn was answered before the gate opened"
        turn.gate.set()
        worker.join(10)
        assert "scripted answer" in answers[0]
        assert [r.kind for r in mock.requests] == ["stage1"], "the turn reached the mock"
        assert front.quiet_for() > 0
    finally:
        front.close()
        server.stop()


def test_locate_refuses_a_missing_or_wrong_binary(tmp_path: Path) -> None:
    with pytest.raises(CodexBinaryError, match="not an executable"):
        locate(str(tmp_path / "missing"))
    fake = tmp_path / "codex"
    fake.write_text("#!/bin/sh\necho codex-cli 9.9.9\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(CodexBinaryError, match=r"expected codex-cli 0\.144\.6"):
        locate(str(fake))


@pytest.mark.timeout(600)
def test_suite_subset_against_the_real_binary(tmp_path: Path) -> None:
    binary = os.environ.get(BIN_ENV)
    if not binary:
        pytest.skip(f"set {BIN_ENV} to the Codex 0.144.6 binary (tox and .ci/run do)")
    result = run_cli("run", "--impl", f"codex:{binary}", "--report-dir", str(tmp_path / "r"),
                     "-q", "--id", "protocol", "--id", "read.tool.list",
                     "--id", "read.tool.path[drive-prefix-refused]", "--id", "read.poll.item",
                     cwd=tmp_path, timeout=540)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    seen = statuses(tmp_path / "r")
    assert seen["read.tool.path[drive-prefix-refused]"] == "xfail"
    assert seen["protocol.startup.round-trip"] == "pass"
    assert seen["read.poll.item[mcp-call-pollutes]"] == "unsupported"
    assert sum(s == "pass" for s in seen.values()) >= 35, seen

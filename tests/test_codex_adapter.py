"""The Codex adapter's parts: call grouping, tool results, the front, the binary locator, and
a short run of the suite against the real binary (when MEMCONFORM_CODEX_BIN is set)."""

from __future__ import annotations

import http.client
import json
import os
import re
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import run_cli, statuses
from memconform import mockmodel as mm
from memconform.codex import releases
from memconform.codex.adapter import CodexAdapter, _independent_groups, _tool_result
from memconform.codex.binary import BIN_ENV, CodexBinaryError, locate, parse_spec
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


def fake_codex(tmp_path: Path, reported: str) -> Path:
    fake = tmp_path / "codex"
    fake.write_text(f"#!/bin/sh\necho {reported}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


def test_locate_refuses_a_missing_or_unknown_binary(tmp_path: Path) -> None:
    with pytest.raises(CodexBinaryError, match="not an executable"):
        locate(str(tmp_path / "missing"))
    fake = fake_codex(tmp_path, "codex-cli 9.9.9")
    with pytest.raises(CodexBinaryError, match=r"Codex 9\.9\.9 is not a release memconform "
                                               r"knows \(known: 0\.144\.6, 0\.155\.0, 0\.171\.0\)"):
        locate(str(fake))
    with pytest.raises(CodexBinaryError, match="no version in it"):
        locate(str(fake_codex(tmp_path, "codex-cli")))


def test_locate_names_the_release_a_path_reports(tmp_path: Path) -> None:
    fake = fake_codex(tmp_path, "codex-cli 0.155.0")
    assert locate(str(fake))[1].version == "0.155.0"
    assert locate(str(fake), "0.155.0")[1].default_layout == "v1"
    with pytest.raises(CodexBinaryError, match=r"reports 'codex-cli 0\.155\.0', expected "
                                               r"codex-cli 0\.171\.0"):
        locate(str(fake), "0.171.0")
    with pytest.raises(CodexBinaryError, match=r"Codex 0\.150\.0 is not a release"):
        locate(str(fake), "0.150.0")


@pytest.mark.parametrize(("spec", "parsed"), [
    ("codex", (None, None, None)),
    ("codex@0.155.0", ("0.155.0", None, None)),
    ("codex/v1:/opt/codex", (None, "v1", "/opt/codex")),
    ("codex@0.171.0/v2:/a:b", ("0.171.0", "v2", "/a:b")),
])
def test_codex_specs(spec: str, parsed: tuple[str | None, ...]) -> None:
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize(("spec", "problem"), [
    ("codex@", "expected codex"), ("codex-x", "expected codex"), ("codex/", "expected codex"),
    ("codex:", "the path after ':' is empty"),
])
def test_bad_codex_specs_are_refused(spec: str, problem: str) -> None:
    with pytest.raises(CodexBinaryError, match=re.escape(problem)):
        parse_spec(spec)


def test_adapter_refuses_a_layout_the_release_lacks(tmp_path: Path) -> None:
    old = fake_codex(tmp_path, "codex-cli 0.144.6")
    reply = CodexAdapter(str(old), None, "v2").handle({"seq": 1, "op": "start", "args": {}})
    assert "Codex 0.144.6 has no memory layout 'v2' (it has v1)" in reply["error"]["message"]
    new = fake_codex(tmp_path, "codex-cli 0.171.0")
    reply = CodexAdapter(str(new), None, "v2").handle({"seq": 1, "op": "start", "args": {}})
    assert reply["result"]["follows"] == {"codex": "0.171.0", "layout": "v2"}
    reply = CodexAdapter(str(new)).handle({"seq": 2, "op": "start", "args": {}})
    assert reply["result"]["implementation"] | {"binary": ""} == {
        "name": "codex-cli", "version": "0.171.0", "language": "rust", "binary": "",
        "layout": "v1"}


ARGS_CODEX = """#!/bin/sh
[ "$1" = --version ] && { echo "codex-cli 0.171.0"; exit 0; }
for arg in "$@"; do echo "$arg"; done > "$0.args"
"""


def test_sessions_run_with_the_release_s_idle_features_off(tmp_path: Path) -> None:
    """Each session turns off the features no memory check needs, on its command line only."""
    fake = tmp_path / "codex"
    fake.write_text(ARGS_CODEX, encoding="utf-8")
    fake.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    config = 'model_provider = "mock"\n[model_providers.mock]\nbase_url = "http://127.0.0.1:9/v1"\n'
    (home / "config.toml").write_text(config, encoding="utf-8")
    adapter = CodexAdapter(str(fake), None, "v2")
    try:
        assert adapter._run(home, ["memconform turn"], Turn([[]])).returncode == 0
    finally:
        adapter.handle({"seq": 1, "op": "stop", "args": {}})
    args = (tmp_path / "codex.args").read_text(encoding="utf-8").splitlines()
    assert releases.get("0.171.0").off_features == ("shell_snapshot", "plugins")
    at = args.index("features.shell_snapshot=false")
    assert args[at - 1:at + 3] == ["-c", "features.shell_snapshot=false",
                                   "-c", "features.plugins=false"]
    assert args[-1] == "memconform turn"
    assert (home / "config.toml").read_text(encoding="utf-8") == config


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


def test_turn_instructions_gathers_the_pieces_of_the_memory_text(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    begins, ends = "========= MEMORY_SUMMARY BEGINS =========", \
        "========= MEMORY_SUMMARY ENDS ========="
    developer = {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "<permissions>"},
        {"type": "input_text", "text": f"## Memory\n{begins}\nv1\nhead"},
        {"type": "input_text", "text": "middle"},
        {"type": "input_text", "text": f"tail\n{ends}\n"},
        {"type": "input_text", "text": "<skills>"}]}
    adapter = CodexAdapter(str(fake_codex(tmp_path, "codex-cli 0.171.0")), None, "v2")
    monkeypatch.setattr(adapter, "_first_request", lambda home: {"input": [developer]})
    assert adapter.turn_instructions({"home": str(tmp_path)})["developer_fragments"] == [
        f"## Memory\n{begins}\nv1\nhead", "middle", f"tail\n{ends}\n"]
    developer["content"] = [{"type": "input_text", "text": f"{begins}\nall\n{ends}"}]
    assert adapter.turn_instructions({"home": str(tmp_path)})["developer_fragments"] == [
        f"{begins}\nall\n{ends}"]

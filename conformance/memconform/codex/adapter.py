"""`CodexAdapter`: protocol v1 operations served by the real Codex binary.

- `startup`: one `codex exec` session (`resume` for a given thread, `--ephemeral` when asked);
  its own turn is held until the pipeline it started has settled.
- `turn.instructions`, `turn.tools`, `tools.call`: one ephemeral session (no pipeline, no
  thread), reading the developer message and tools of its model request, or scripting the
  model to call the memory tools and reading back each call's output.
- `turn.message`: one session whose model answers with the text; the usage write is read from
  the layout's memories DB, the visible text from the session's output and the citation from its
  rollout. The memories feature is switched off for this session only (usage is recorded
  regardless) so that no startup pipeline runs beside the turn.
- `turn.event`: the thread is resumed with the feature off and the item in its model answer.

`auth.chatgpt`: the harness's ChatGPT login (unsigned JWTs) is one the binary accepts, so it
asks the mock for plan usage like a real login would.

Time cannot be injected into the binary and pure functions cannot be reached, so those
capabilities are not declared.
"""

from __future__ import annotations

import json
import sqlite3
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform.codex import session
from memconform.codex.binary import CodexBinaryError, locate
from memconform.codex.front import Front, Turn
from memconform.codex.releases import Release
from memconform.home import LAYOUT_PATHS
from memconform.mockmodel import message_item

PROTOCOL_VERSION = 1
CAPABILITIES = ("startup", "agent.apply_patch", "turn.instructions", "turn.message",
                "memory.tools", "turn.event", "auth.chatgpt")
SUMMARY_BEGINS = "========= MEMORY_SUMMARY BEGINS ========="
SUMMARY_ENDS = "========= MEMORY_SUMMARY ENDS ========="
FEATURE_OFF = ["-c", "features.memories=false"]
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
DRIVEN_LAYOUTS = ("v1", "v2")  # the layouts memconform's checks are written for


class Unserved(Exception):
    """The binary cannot be driven to this request."""


class CodexAdapter:
    def __init__(self, binary: str | None = None, version: str | None = None,
                 layout: str | None = None) -> None:
        self.binary_spec = binary
        self.version = version
        self.layout = layout or "v1"
        self._binary: Path | None = None
        self._release: Release | None = None
        self._front: Front | None = None
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "start": self.start, "stop": self.stop, "startup": self.startup,
            "turn.instructions": self.turn_instructions, "turn.tools": self.turn_tools,
            "tools.call": self.tools_call, "turn.message": self.turn_message,
            "turn.event": self.turn_event,
        }

    @property
    def binary(self) -> Path:
        if self._binary is None:
            path, release = locate(self.binary_spec, self.version)
            if self.layout not in release.layouts:
                raise CodexBinaryError(f"Codex {release.version} has no memory layout "
                                       f"{self.layout!r} (it has {', '.join(release.layouts)})")
            if self.layout not in DRIVEN_LAYOUTS:
                raise CodexBinaryError(f"memconform's checks cover the memory layout "
                                       f"{', '.join(DRIVEN_LAYOUTS)} only; {self.layout!r} "
                                       f"cannot be run yet")
            self._binary, self._release = path, release
        return self._binary

    @property
    def release(self) -> Release:
        self.binary  # noqa: B018  # locates the binary and its release
        assert self._release is not None
        return self._release

    @property
    def front(self) -> Front:
        if self._front is None:
            self._front = Front()
        return self._front

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        seq = message.get("seq", 0)
        op = message.get("op")
        handler = self._ops.get(op) if isinstance(op, str) else None
        try:
            if handler is None:
                raise Unserved(f"operation {op!r} cannot be served by the Codex binary")
            return {"seq": seq, "ok": True, "result": handler(message.get("args") or {})}
        except Unserved as exc:
            return _error(seq, "unsupported", str(exc))
        except (CodexBinaryError, session.CodexSessionError) as exc:
            return _error(seq, "internal", str(exc))
        except Exception as exc:
            return _error(seq, "internal", "".join(traceback.format_exception(exc)))

    # -- protocol ------------------------------------------------------------------------------

    def start(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"implementation": {"name": "codex-cli", "version": self.release.version,
                                   "language": "rust", "binary": str(self.binary),
                                   "layout": self.layout},
                "protocol_version": PROTOCOL_VERSION, "capabilities": list(CAPABILITIES),
                "follows": {"codex": self.release.version, "layout": self.layout}}

    def stop(self, args: dict[str, Any]) -> dict[str, Any]:
        if self._front is not None:
            self._front.close()
            self._front = None
        return {}

    def _run(self, home: Path, args: list[str], turn: Turn, *, hold: bool = False,
             env: dict[str, str] | None = None, timeout_s: float = 120.0) -> session.Result:
        key_env = env if env is not None else {}
        off = [flag for name in self.release.off_features
               for flag in ("-c", f"features.{name}=false")]
        return session.run(self.binary, self.front, home, env=key_env,
                           args=[*off, *self._layout_pin(home), *args], turn=turn, hold=hold,
                           timeout_s=timeout_s, end_marker=self._end_marker(home))

    def _end_marker(self, home: Path) -> str | None:
        """The release's pipeline-end line; none when `dual_write` runs two pipelines."""
        if session.memories_table(home).get("dual_write") is True:
            return None
        return self.release.pipeline_end

    def _layout_pin(self, home: Path) -> list[str]:
        """A release with two layouts runs the adapter's, unless the home's config chooses."""
        if len(self.release.layouts) < 2 or "version" in session.memories_table(home):
            return []
        return ["-c", f'memories.version="{self.layout}"']

    def startup(self, args: dict[str, Any]) -> dict[str, Any]:
        spec = args["session"]
        if spec.get("subagent"):
            raise Unserved("a sub-agent session cannot be started from the command line")
        extra = ["--ephemeral"] if spec.get("ephemeral") else []
        resume = spec.get("resume_thread_id")
        extra += ["resume", resume] if resume else []
        result = self._run(Path(args["home"]), [*extra, "memconform startup"],
                           Turn([[message_item("ok")]]), hold=True, env=args.get("env"),
                           timeout_s=float(args.get("timeout_s") or 120))
        _require_success(result)
        return {"session_thread_id": None if spec.get("ephemeral") else result.thread_id}

    def _first_request(self, home: Path) -> dict[str, Any]:
        result = self._run(home, ["--ephemeral", "memconform turn"], Turn([[message_item("ok")]]))
        _require_success(result)
        if not result.turn.requests:
            raise session.CodexSessionError("the session sent no model request")
        return result.turn.requests[0]

    def turn_instructions(self, args: dict[str, Any]) -> dict[str, Any]:
        """The developer text parts from the one holding the summary's begin line through the
        one holding its end line (one part in layout v1; pieces of it in v2)."""
        request = self._first_request(Path(args["home"]))
        fragments: list[str] = []
        for item in request.get("input", []):
            if not isinstance(item, dict) or item.get("role") != "developer":
                continue
            texts = [str(part.get("text", "")) for part in item.get("content") or []]
            begin = next((i for i, t in enumerate(texts) if SUMMARY_BEGINS in t), None)
            if begin is None:
                continue
            end = next((i for i in range(begin, len(texts)) if SUMMARY_ENDS in texts[i]),
                       begin)
            fragments.extend(texts[begin:end + 1])
        return {"developer_fragments": fragments}

    def turn_tools(self, args: dict[str, Any]) -> dict[str, Any]:
        request = self._first_request(Path(args["home"]))
        tools = [{"namespace": group["name"], "name": tool["name"],
                  "description": tool.get("description", ""),
                  "parameters": tool.get("parameters", {})}
                 for group in request.get("tools", [])
                 if group.get("type") == "namespace" and group.get("name") == "memories"
                 for tool in group.get("tools", [])]
        return {"tools": tools}

    def tools_call(self, args: dict[str, Any]) -> dict[str, Any]:
        home = Path(args["home"])
        calls = [{"type": "function_call", "namespace": "memories", "name": c["name"],
                  "arguments": c["arguments"], "call_id": f"memconform_{i}"}
                 for i, c in enumerate(args["calls"])]
        result = self._run(home, ["--ephemeral", "memconform tools"],
                           Turn([*_independent_groups(calls), [message_item("done")]]))
        _require_success(result)
        outputs: dict[str, str] = {}
        for request in result.turn.requests:
            for item in request.get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    outputs.setdefault(str(item.get("call_id")), _text(item.get("output")))
        results = []
        for call in calls:
            if call["call_id"] not in outputs:
                raise session.CodexSessionError(f"no output for {call['name']} "
                                                f"{call['arguments'][:200]}")
            results.append(_tool_result(outputs[call["call_id"]]))
        return {"results": results}

    def turn_message(self, args: dict[str, Any]) -> dict[str, Any]:
        home = Path(args["home"])
        before = _usage(home, self.layout)
        result = self._run(home, [*FEATURE_OFF, "memconform message"],
                           Turn([[message_item(args["text"])]]))
        _require_success(result)
        after = _usage(home, self.layout)
        updates = sum(count - before.get(tid, 0) for tid, count in after.items())
        messages = result.agent_messages()
        reply: dict[str, Any] = {"visible_text": messages[-1] if messages else "",
                                 "usage_updates": updates}
        citation = _rollout_citation(home, result.thread_id)
        if citation is not None:
            reply["citation"] = citation
        return reply

    def turn_event(self, args: dict[str, Any]) -> dict[str, Any]:
        home = Path(args["home"])
        item = dict(args["item"])
        if item.get("type") == "mcp_tool_call":
            raise Unserved("an MCP call needs an MCP server; only response items are served")
        if item.get("type") in CALL_ITEMS:  # Codex runs the call and asks again
            item.setdefault("call_id", "memconform_event")
            answers = [[item], [message_item("done")]]
        else:
            answers = [[item, message_item("done")]]
        before = _memory_mode(home, args["thread_id"])
        result = self._run(home, [*FEATURE_OFF, "resume", args["thread_id"], "memconform event"],
                           Turn(answers))
        _require_success(result)
        after = _memory_mode(home, args["thread_id"])
        return {"polluted": before != "polluted" and after == "polluted"}


def factory(binary: str | None = None, version: str | None = None,
            layout: str | None = None) -> CodexAdapter:
    return CodexAdapter(binary, version, layout)


def _error(seq: Any, kind: str, message: str) -> dict[str, Any]:
    return {"seq": seq, "ok": False, "error": {"kind": kind, "message": message}}


def _require_success(result: session.Result) -> None:
    if result.returncode != 0:
        raise session.CodexSessionError(f"codex exec exited {result.returncode}: "
                                        f"{result.stderr[-1500:]}")


def _independent_groups(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive calls whose order cannot matter, one model answer each. Codex may run the
    calls of one answer concurrently, so a group is either reads only, or notes with distinct
    file names."""
    groups: list[list[dict[str, Any]]] = []
    names: set[str] = set()
    for call in calls:
        writes = call["name"] == "add_ad_hoc_note"
        try:
            name = str(json.loads(call["arguments"]).get("filename"))
        except (ValueError, AttributeError):
            name = call["arguments"]
        current = groups[-1] if groups else []
        same_kind = bool(current) and (current[0]["name"] == "add_ad_hoc_note") == writes
        if not same_kind or (writes and name in names):
            groups.append([])
            names = set()
        groups[-1].append(call)
        names.add(name)
    return groups


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content items
        return "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output)


def _tool_result(text: str) -> dict[str, Any]:
    """A tool's output is its JSON answer; anything else is the refusal the model read."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"error": text or "(empty output)"}
    return {"output": value} if isinstance(value, dict) else {"error": text}


def _usage(home: Path, layout: str) -> dict[str, int]:
    path = home / LAYOUT_PATHS[layout][1]
    if not path.exists():
        return {}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return {r[0]: r[1] or 0 for r in con.execute(
            "SELECT thread_id, usage_count FROM stage1_outputs")}
    finally:
        con.close()


def _memory_mode(home: Path, thread_id: str) -> str | None:
    con = sqlite3.connect(f"file:{home / 'state_5.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute("SELECT memory_mode FROM threads WHERE id = ?", (thread_id,)).fetchone()
    finally:
        con.close()
    return None if row is None else str(row[0])


def _rollout_citation(home: Path, thread_id: str | None) -> dict[str, Any] | None:
    """The citation Codex recorded with the agent message in the session's rollout."""
    if thread_id is None:
        return None
    for path in (home / "sessions").rglob(f"rollout-*{thread_id}.jsonl"):
        # JSON lines end at LF only: U+2028, U+2029 and U+0085 appear unescaped in records
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            payload = entry.get("payload") or {}
            cited = payload.get("memory_citation")
            if entry.get("type") == "event_msg" and payload.get("type") == "agent_message" \
                    and cited:
                return {"entries": [{"path": e["path"], "line_start": e["lineStart"],
                                     "line_end": e["lineEnd"], "note": e["note"]}
                                    for e in cited.get("entries", [])],
                        "rollout_ids": list(cited.get("rolloutIds", []))}
    return None

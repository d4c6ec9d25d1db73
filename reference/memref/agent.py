"""The consolidation agent: a bounded tool loop against the model, confined to the memory root
(AGENT-01..AGENT-04). It never records a rollout and never runs the memories pipeline itself."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memref.agent_reading import READ_TOOLS, read_tool
from memref.config import Provider
from memref.patch import PatchError, apply_patch, summary
from memref.prompts import CONSOLIDATION_INSTRUCTIONS
from memref.responses import ModelError, stream_response

log = logging.getLogger(__name__)
MAX_TURNS = 24
SUBAGENT = "memory_consolidation"

TOOLS: list[dict[str, Any]] = [
    {"type": "custom", "name": "apply_patch",
     "description": "Add, update, move or delete files in the memory folder. Input is a patch "
                    "between '*** Begin Patch' and '*** End Patch'.",
     "format": {"type": "text"}},
    *READ_TOOLS,
]


class AgentError(RuntimeError):
    """The agent did not complete: model failure or no final answer within the turn limit."""


class LostOwnership(AgentError):
    """The consolidation job was taken over while the agent ran."""


@dataclass(frozen=True)
class AgentRun:
    model: str
    prompt: str
    thread_id: str
    service_tier: str | None = None  # AGENT-05


def run_tool(root: Path, name: str, payload: str) -> str:
    """One tool call; a refused or failed call is reported to the model, never raised."""
    try:
        if name == "apply_patch":
            return summary(apply_patch(root, payload))
        args = json.loads(payload or "{}")
        if not isinstance(args, dict):
            raise PatchError("arguments must be a JSON object")
        answer = read_tool(root, name, args)
        return f"error: unknown tool {name!r}" if answer is None else answer
    except (PatchError, OSError, json.JSONDecodeError) as exc:
        return f"error: {exc}"


def _calls(items: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(output item type, call id, tool name, payload) for each tool call in a reply."""
    out = []
    for item in items:
        if item.get("type") == "custom_tool_call":
            out.append(("custom_tool_call_output", str(item.get("call_id")),
                        str(item.get("name")), str(item.get("input", ""))))
        elif item.get("type") == "function_call":
            out.append(("function_call_output", str(item.get("call_id")),
                        str(item.get("name")), str(item.get("arguments", ""))))
    return out


def run_agent(provider: Provider, root: Path, run: AgentRun, env: dict[str, str],
              still_owned: Callable[[], bool]) -> int:
    """Drive the agent until it answers without a tool call; returns the number of turns.
    Ownership is confirmed after every model reply, before any tool touches a file."""
    history: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{root}</cwd>\n"
                                           "  <network>disabled</network>\n"
                                           "</environment_context>"}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": run.prompt}]},
    ]
    headers = {"x-openai-subagent": SUBAGENT, "x-openai-memgen-request": "true",
               "session-id": run.thread_id, "thread-id": run.thread_id,
               "x-codex-turn-metadata": json.dumps({"thread_source": SUBAGENT})}
    for turn in range(1, MAX_TURNS + 1):
        body = {"model": run.model, "instructions": CONSOLIDATION_INSTRUCTIONS,
                "input": history, "tools": TOOLS, "tool_choice": "auto",
                "parallel_tool_calls": False, "reasoning": {"effort": "medium"},
                "text": {"verbosity": "low"}, "store": False, "stream": True,
                "prompt_cache_key": run.thread_id}
        if run.service_tier is not None:
            body["service_tier"] = run.service_tier
        try:
            reply = stream_response(provider, body, env=env, headers=headers)
        except ModelError as exc:
            raise AgentError(f"consolidation model call failed: {exc}") from exc
        if not still_owned():
            raise LostOwnership("lost global phase-2 ownership during the agent run")
        calls = _calls(reply.items)
        if not calls:
            return turn
        history.extend(reply.items)
        for output_type, call_id, name, payload in calls:
            output = run_tool(root, name, payload)
            log.info("consolidation tool %s: %s", name, output.splitlines()[0] if output else "")
            history.append({"type": output_type, "call_id": call_id, "output": output})
    raise AgentError(f"the consolidation agent did not finish within {MAX_TURNS} turns")

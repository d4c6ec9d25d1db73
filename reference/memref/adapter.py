"""The reference behind the memconform adapter protocol v1 (one message in, one message out)."""

from __future__ import annotations

import dataclasses
import sqlite3
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memref import (
    __version__,
    citations,
    jobs,
    materialize,
    pollution,
    releases,
    store,
    tokens,
    usage,
)
from memref.config import CodexConfig, ConfigError, load_config
from memref.injection import developer_fragments
from memref.releases import DEFAULT as DEFAULT_RELEASE
from memref.releases import Release
from memref.runtime import Runtime
from memref.stage1_output import StageOneOutput
from memref.startup import Session, memory_root, run_startup
from memref.tools import calls as tool_calls

PROTOCOL_VERSION = 1
CAPABILITIES = (
    "startup",
    "clock.inject",
    "config.resolve",
    "tokens.approx",
    "files.stem",
    "session.subagent",
    "startup.without-state-db",
    "jobs.stage1",
    "auth.chatgpt",
    "jobs.phase2",
    "agent.apply_patch",
    "citations.parse",
    "turn.message",
    "turn.instructions",
    "memory.tools",
    "turn.event",
)


class OpError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ReferenceAdapter:
    """Stateless apart from the seed given at `start`; follows one Codex release."""

    def __init__(self, release: Release = DEFAULT_RELEASE, layout: str | None = None) -> None:
        self.release = release
        self.layout = "v1" if layout is None else layout
        if self.layout not in release.layouts:
            raise ValueError(f"Codex {release.version} has no memory layout {self.layout!r} "
                             f"(it has {', '.join(release.layouts)})")
        self.seed = 0
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "start": self.start,
            "stop": lambda args: {},
            "startup": self.startup,
            "config.resolve": self.config_resolve,
            "tokens.approx": lambda args: {"tokens": tokens.approx_token_count(args["text"])},
            "files.stem": lambda args: {"stem": materialize.summary_stem(
                args["thread_id"], args["source_updated_at"], args["rollout_slug"])},
            "citations.parse": self.citations_parse,
            "turn.message": self.turn_message,
            "turn.instructions": lambda args: {"developer_fragments": developer_fragments(
                Path(args["home"]), self._config(args))},
            "turn.tools": lambda args: {"tools": tool_calls.offered(self._config(args))},
            "tools.call": self.tools_call,
            "turn.event": self.turn_event,
            "stage1.claim": self.stage1_claim,
            "stage1.finish": self.stage1_finish,
            "phase2.claim": self.phase2_claim,
            "phase2.heartbeat": self.phase2_heartbeat,
            "phase2.finish": self.phase2_finish,
        }

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        seq = message.get("seq", 0)
        op = message.get("op")
        handler = self._ops.get(op) if isinstance(op, str) else None
        try:
            if handler is None:
                raise OpError("unsupported", f"operation {op!r} is not implemented")
            return {"seq": seq, "ok": True, "result": handler(message.get("args") or {})}
        except OpError as exc:
            return _error(seq, exc.kind, str(exc))
        except ConfigError as exc:
            return _error(seq, "rejected", str(exc))
        except Exception as exc:
            return _error(seq, "internal", "".join(traceback.format_exception(exc)))

    def start(self, args: dict[str, Any]) -> dict[str, Any]:
        if PROTOCOL_VERSION not in args["protocol_versions"]:
            raise OpError("rejected", f"protocol {PROTOCOL_VERSION} not offered")
        self.seed = int(args["seed"])
        return {
            "implementation": {"name": "memref", "version": __version__, "language": "python"},
            "protocol_version": PROTOCOL_VERSION,
            "capabilities": list(CAPABILITIES),
            "follows": {"codex": self.release.version, "layout": self.layout},
        }

    @property
    def pin_version(self) -> str | None:
        """The layout given beside config.toml, like the Codex adapter's
        `-c memories.version=…` (a home's own `version` still wins)."""
        return self.layout if len(self.release.layouts) > 1 else None

    def _config(self, args: dict[str, Any]) -> CodexConfig:
        return load_config(Path(args["home"]), self.release, self.pin_version)

    def _runtime(self, args: dict[str, Any]) -> Runtime:
        now_ms = args.get("now_ms")
        return Runtime(now_ms=int(time.time() * 1000) if now_ms is None else now_ms,
                       seed=args.get("seed", self.seed))

    def startup(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        spec = args["session"]
        session = Session(thread_id=spec.get("resume_thread_id") or rt.uuid7(),
                          env=dict(args["env"]), source=spec["source"],
                          ephemeral=spec["ephemeral"], subagent=spec["subagent"])
        run_startup(Path(args["home"]), session, rt, self.release, self.pin_version)
        # an ephemeral session records no thread of its own
        return {"session_thread_id": None if session.ephemeral else session.thread_id}

    def stage1_claim(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        con = store.memories_db(Path(args["home"]), self._config(args))
        try:
            claim = jobs.claim_stage1(con, args["thread_id"], args["watermark"],
                                      worker=args["worker_id"], token=rt.uuid4(), now=rt.now,
                                      max_running=args["max_running"])
        finally:
            con.close()
        return {"outcome": claim.outcome.value, "token": claim.token}

    def stage1_finish(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        thread, token, result = args["thread_id"], args["token"], args["result"]
        con = store.memories_db(Path(args["home"]), self._config(args))
        try:
            if result == "succeeded":
                if "output" not in args or "watermark" not in args:
                    raise OpError("rejected", "succeeded needs `output` and `watermark`")
                out = args["output"]
                applied = jobs.succeeded(con, thread, token, args["watermark"], StageOneOutput(
                    out["raw_memory"], out["rollout_summary"], out["rollout_slug"]), now=rt.now)
            elif result == "no_output":
                applied = jobs.succeeded_no_output(con, thread, token, now=rt.now)
            else:
                applied = jobs.failed(con, thread, token, args["reason"], now=rt.now)
        finally:
            con.close()
        return {"applied": applied}

    def phase2_claim(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        token = rt.uuid4()
        with self._memories(args) as con:
            outcome, watermark = jobs.claim_global(con, worker=args["worker_id"], token=token,
                                                   now=rt.now)
        claimed = outcome is jobs.GlobalClaim.CLAIMED
        return {"outcome": outcome.value, "token": token if claimed else None,
                "input_watermark": watermark}

    def phase2_heartbeat(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        with self._memories(args) as con:
            return {"applied": jobs.heartbeat_global(con, args["token"], now=rt.now)}

    def phase2_finish(self, args: dict[str, Any]) -> dict[str, Any]:
        rt = self._runtime(args)
        with self._memories(args) as con:
            if args["result"] == "succeeded":
                selected = [(str(t), int(s)) for t, s in args["selected"]]
                applied = jobs.global_succeeded(con, args["token"], args["completed_watermark"],
                                                selected, now=rt.now)
            else:
                applied = jobs.global_failed(con, args["token"], args["reason"], now=rt.now)
        return {"applied": applied}

    @contextmanager
    def _memories(self, args: dict[str, Any]) -> Iterator[sqlite3.Connection]:
        con = store.memories_db(Path(args["home"]), self._config(args))
        try:
            yield con
        finally:
            con.close()

    @staticmethod
    def citations_parse(args: dict[str, Any]) -> dict[str, Any]:
        visible, bodies = citations.strip_citations(args["text"])
        parsed = citations.parse_citation(bodies)
        return {"visible_text": visible,
                "citation": None if parsed is None else {
                    "entries": [dataclasses.asdict(e) for e in parsed.entries],
                    "rollout_ids": parsed.rollout_ids},
                "thread_ids": citations.cited_threads(parsed) if parsed else []}

    def turn_message(self, args: dict[str, Any]) -> dict[str, Any]:
        """A completed assistant message: hide its citations and count the cited memories."""
        parsed = self.citations_parse(args)
        rt = self._runtime(args)
        updates = 0
        if parsed["thread_ids"]:
            with self._memories(args) as con:
                updates = usage.record_usage(con, parsed["thread_ids"], rt.now)
        return {**parsed, "usage_updates": updates}

    def tools_call(self, args: dict[str, Any]) -> dict[str, Any]:
        """Memory tool calls of one turn, in order."""
        home = Path(args["home"])
        config = self._config(args)
        root = memory_root(home, config).absolute()
        return {"results": [tool_calls.call(config, root, c["name"], c["arguments"])
                            for c in args["calls"]]}

    def turn_event(self, args: dict[str, Any]) -> dict[str, Any]:
        home = Path(args["home"])
        polluted = pollution.record_item(home, self._config(args), args["thread_id"],
                                         args["item"], self._runtime(args).now)
        return {"polluted": polluted}

    def config_resolve(self, args: dict[str, Any]) -> dict[str, Any]:
        config = self._config(args)
        memories = dataclasses.asdict(config.memories)
        memories["extract_model"] = config.extract_model
        memories["consolidation_model"] = config.consolidation_model
        if len(self.release.layouts) > 1:
            memories["version"] = config.layout.name
        else:
            del memories["version"], memories["dual_write"]
        if not self.release.service_tier_key:
            del memories["consolidation_service_tier"]
        return {"feature_memories": config.feature_memories, "memories": memories}


def _error(seq: Any, kind: str, message: str) -> dict[str, Any]:
    return {"seq": seq, "ok": False, "error": {"kind": kind, "message": message}}


def factory(release: str | None = None) -> ReferenceAdapter:
    """Entry point for `--impl python:memref.adapter:factory` (`ref@VERSION[/LAYOUT]` passes
    the Codex release to follow and the memory layout to use, v1 unless named)."""
    if release is None:
        return ReferenceAdapter()
    version, _, layout = release.partition("/")
    return ReferenceAdapter(releases.get(version), layout or None)

"""The cloud control plane over HTTP (FastAPI): the public auto-memory API, authenticated per
user, and a conformance API (its own token) that seeds data, moves the clock, runs a worker
round and plays a task's turn."""


import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Connection, Engine, delete, insert, select

from memref.cloud import access, extract, inject
from memref.cloud import settings as user_settings
from memref.cloud.extract import Faults
from memref.cloud.schema import (
    audit_events,
    engine_for,
    extraction_log,
    members,
    memories,
    metadata,
    projects,
    quotas,
    task_flags,
    tasks,
    users,
)


@dataclass
class Service:
    engine: Engine
    conformance_token: str | None
    fixed_now: int | None = None
    faults: Faults = field(default_factory=Faults)

    def now(self) -> int:
        return int(time.time()) if self.fixed_now is None else self.fixed_now

    def connection(self) -> Iterator[Connection]:
        with self.engine.begin() as con:
            yield con


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FlagsUpdate(Strict):
    use: bool | None = None
    generate: bool | None = None


class RunRequest(Strict):
    force: bool = False


class NewUser(Strict):
    id: str = Field(min_length=1, max_length=64)


class Member(Strict):
    user_id: str
    can_create_tasks: bool = True


class NewProject(Strict):
    id: str = Field(min_length=1, max_length=64)
    members: list[Member] = []


class NewTask(Strict):
    id: str = Field(min_length=1, max_length=64)
    project_id: str
    user_id: str
    kind: Literal["task", "coordinator"] = "task"
    status: Literal["queued", "running", "completed", "failed", "interrupted", "merged"]
    goal: str = ""
    prompt: str = ""
    result: str = ""
    started_at: int | None = None
    finished_at: int | None = None
    parent_task_id: str | None = None
    followup_messages: int = Field(0, ge=0)


class NewQuota(Strict):
    user_id: str
    month: str = Field(pattern=r"^\d{4}-\d{2}$")
    limit_units: int | None
    used_units: int = Field(0, ge=0)


class NewMemory(Strict):
    scope: Literal["user", "project"]
    user_id: str | None = None
    project_id: str | None = None
    content: str
    created_at: int


class Clock(Strict):
    now: int | None


class FaultSwitches(Strict):
    quota_lookup: bool = False
    memory_lookup: bool = False


class Turn(Strict):
    turn: Literal["first", "continuation", "resume"]


def create_app(database_url: str, conformance_token: str | None = None) -> FastAPI:
    """The app on `database_url`; the conformance API exists only with a token."""
    service = Service(engine_for(database_url), conformance_token)
    app = FastAPI(title="memref cloud auto-memory")
    app.state.service = service
    db = Annotated[Connection, Depends(service.connection, scope="function")]

    def current_user(con: db, authorization: Annotated[str | None, Header()] = None) -> str:
        user = access.user_for(con, authorization)
        if user is None:
            raise HTTPException(401, "missing or unknown bearer token")
        return user

    me = Annotated[str, Depends(current_user)]

    @app.get("/users/me/auto-memory-settings")
    def get_settings(con: db, user: me) -> dict[str, Any]:
        return user_settings.read(con, user)

    @app.put("/users/me/auto-memory-settings")
    def put_settings(con: db, user: me, body: user_settings.SettingsUpdate) -> dict[str, Any]:
        nulls = sorted(k for k in body.model_fields_set
                       if k in user_settings.NOT_NULL and getattr(body, k) is None)
        if nulls:
            raise HTTPException(422, f"{', '.join(nulls)}: null is not a value for this setting")
        return user_settings.update(con, user, body, set(body.model_fields_set))

    @app.post("/tasks/{task_id}/auto-memory-flags")
    def set_flags(task_id: str, con: db, user: me, body: FlagsUpdate) -> dict[str, Any]:
        allowed = access.task_access(con, task_id, user)
        if allowed == "none":
            raise HTTPException(404, f"no task {task_id!r} in a project of yours")
        if allowed != "creator":
            raise HTTPException(403, "only users who may create tasks in the task's project "
                                     "may set its memory flags")
        row = con.execute(select(task_flags).where(task_flags.c.task_id == task_id)) \
            .mappings().first()
        values = {"use_memories": row["use_memories"] if row else None,
                  "generate_memories": row["generate_memories"] if row else None}
        if "use" in body.model_fields_set:
            values["use_memories"] = body.use
        if "generate" in body.model_fields_set:
            values["generate_memories"] = body.generate
        con.execute(delete(task_flags).where(task_flags.c.task_id == task_id))
        con.execute(insert(task_flags).values(task_id=task_id, **values))
        return {"task_id": task_id, "use": values["use_memories"],
                "generate": values["generate_memories"]}

    @app.post("/users/me/auto-memory/run")
    def run_now(con: db, user: me, body: RunRequest | None = None) -> dict[str, Any]:
        done = extract.sweep(con, service.now(), service.faults, user_id=user,
                             force=bool(body and body.force))
        return {"extracted": done.extracted, "skipped": done.skipped}

    @app.get("/users/me/auto-memory-log")
    def get_log(con: db, user: me) -> dict[str, Any]:
        rows = con.execute(select(extraction_log).where(extraction_log.c.user_id == user)
                           .order_by(extraction_log.c.at.desc(), extraction_log.c.task_id))
        return {"entries": [{"task_id": r["task_id"], "outcome": r["outcome"],
                             "reason": r["reason"], "at": r["at"]} for r in rows.mappings()]}

    if conformance_token:
        _conformance_api(app, service, db)
    return app


def _conformance_api(app: FastAPI, service: Service, db: Any) -> None:
    """The /conformance routes; `db` is the annotated connection dependency."""
    def admin(request: Request) -> None:
        given = request.headers.get("x-conformance-token", "")
        if not secrets.compare_digest(given, service.conformance_token or ""):
            raise HTTPException(401, "conformance token required")

    guarded = [Depends(admin)]

    @app.post("/conformance/reset", dependencies=guarded)
    def reset(con: db) -> dict[str, Any]:
        for table in reversed(metadata.sorted_tables):
            con.execute(delete(table))
        service.fixed_now, service.faults = None, Faults()
        return {}

    @app.post("/conformance/users", dependencies=guarded)
    def add_user(con: db, body: NewUser) -> dict[str, Any]:
        token = secrets.token_hex(16)
        con.execute(insert(users).values(id=body.id, token=token))
        return {"id": body.id, "token": token}

    @app.post("/conformance/projects", dependencies=guarded)
    def add_project(con: db, body: NewProject) -> dict[str, Any]:
        con.execute(insert(projects).values(id=body.id))
        for member in body.members:
            con.execute(insert(members).values(project_id=body.id, **member.model_dump()))
        return {"id": body.id}

    @app.post("/conformance/tasks", dependencies=guarded)
    def add_task(con: db, body: NewTask) -> dict[str, Any]:
        con.execute(insert(tasks).values(**body.model_dump()))
        return {"id": body.id}

    @app.get("/conformance/tasks/{task_id}", dependencies=guarded)
    def get_task(task_id: str, con: db) -> dict[str, Any]:
        row = con.execute(select(tasks).where(tasks.c.id == task_id)).mappings().first()
        if row is None:
            raise HTTPException(404, f"no task {task_id!r}")
        return dict(row)

    @app.post("/conformance/quotas", dependencies=guarded)
    def add_quota(con: db, body: NewQuota) -> dict[str, Any]:
        con.execute(insert(quotas).values(**body.model_dump()))
        return {}

    @app.post("/conformance/memories", dependencies=guarded)
    def add_memory(con: db, body: NewMemory) -> dict[str, Any]:
        result = con.execute(insert(memories).values(**body.model_dump(), superseded=False))
        return {"id": result.inserted_primary_key[0] if result.inserted_primary_key else None}

    @app.get("/conformance/memories", dependencies=guarded)
    def list_memories(con: db) -> dict[str, Any]:
        columns = [memories.c[name] for name in ("id", "scope", "project_id", "user_id",
                                                 "source_task_id", "content", "created_at",
                                                 "superseded")]
        rows = con.execute(select(*columns).order_by(memories.c.id)).mappings()
        return {"memories": [dict(r) for r in rows]}

    @app.get("/conformance/audit", dependencies=guarded)
    def list_audit(con: db) -> dict[str, Any]:
        rows = con.execute(select(audit_events).order_by(audit_events.c.id)).mappings()
        return {"events": [dict(r) for r in rows]}

    @app.post("/conformance/clock", dependencies=guarded)
    def set_clock(body: Clock) -> dict[str, Any]:
        service.fixed_now = body.now
        return {"now": service.now()}

    @app.post("/conformance/faults", dependencies=guarded)
    def set_faults(body: FaultSwitches) -> dict[str, Any]:
        service.faults = Faults(**body.model_dump())
        return {}

    @app.post("/conformance/worker/round", dependencies=guarded)
    def worker_round(con: db) -> dict[str, Any]:
        done = extract.sweep(con, service.now(), service.faults)
        return {"extracted": done.extracted, "skipped": done.skipped}

    @app.post("/conformance/tasks/{task_id}/turn", dependencies=guarded)
    def play_turn(task_id: str, con: db, body: Turn) -> dict[str, Any]:
        row = con.execute(select(tasks).where(tasks.c.id == task_id)).mappings().first()
        if row is None:
            raise HTTPException(404, f"no task {task_id!r}")
        return inject.turn_input(con, dict(row), body.turn, service.now(), service.faults)



"""The cloud control plane over HTTP (FastAPI): the public auto-memory API, authenticated per
user, and a conformance API (its own token) that seeds data, moves the clock, runs a worker
round and plays a task's turn.

Under concurrency: every request does its database work inside one call of the server's thread
pool (never holding a connection while it waits for a thread), the connection pool covers that
thread pool, writes are retried when they collide with another transaction, and what must be
refused is refused with a 4xx and a short JSON message: 409 for data that conflicts with what
is stored, 413 for a body over MAX_BODY_BYTES, 422 for invalid input (never echoed back), 429
when the database stays busy."""


import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy import Connection, Engine, delete, insert, select
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memref.cloud import access, db, extract, inject
from memref.cloud import settings as user_settings
from memref.cloud.extract import Faults
from memref.cloud.schema import (
    REQUEST_THREADS,
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

T = TypeVar("T")
MAX_BODY_BYTES = 1024 * 1024
TOO_LARGE = f"request body over {MAX_BODY_BYTES // 1024 // 1024} MiB"
MAX_ERRORS_SHOWN = 5
RETRY_AFTER_S = "1"
# text a database stores unchanged on every backend (no NUL, no lone surrogate)
Text = Annotated[str, AfterValidator(db.check_text)]


@dataclass
class Service:
    engine: Engine
    conformance_token: str | None
    fixed_now: int | None = None
    faults: Faults = field(default_factory=Faults)

    def now(self) -> int:
        return int(time.time()) if self.fixed_now is None else self.fixed_now

    def read(self, work: Callable[[Connection], T]) -> T:
        """`work` in a read-only transaction."""
        with db.reading(self.engine) as con:
            return work(con)

    def write(self, work: Callable[[Connection], T]) -> T:
        """`work` in a write transaction, retried when it collides with another one."""
        return db.write(self.engine, work)

    def sweep(self, *, user_id: str | None = None, force: bool = False) -> dict[str, Any]:
        """A worker round (or one user's manual run), committed task by task."""
        with db.writer(self.engine) as con:
            done = extract.sweep(con, self.now(), self.faults, user_id=user_id, force=force)
            con.commit()
        return {"extracted": done.extracted, "skipped": done.skipped}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FlagsUpdate(Strict):
    use: bool | None = None
    generate: bool | None = None


class RunRequest(Strict):
    force: bool = False


class NewUser(Strict):
    id: Text = Field(min_length=1, max_length=64)


class Member(Strict):
    user_id: Text
    can_create_tasks: bool = True


class NewProject(Strict):
    id: Text = Field(min_length=1, max_length=64)
    members: list[Member] = []


class NewTask(Strict):
    id: Text = Field(min_length=1, max_length=64)
    project_id: Text
    user_id: Text
    kind: Literal["task", "coordinator"] = "task"
    status: Literal["queued", "running", "completed", "failed", "interrupted", "merged"]
    goal: Text = ""
    prompt: Text = ""
    result: Text = ""
    started_at: int | None = None
    finished_at: int | None = None
    parent_task_id: Text | None = None
    followup_messages: int = Field(0, ge=0)


class NewQuota(Strict):
    user_id: Text
    month: str = Field(pattern=r"^\d{4}-\d{2}$")
    limit_units: int | None
    used_units: int = Field(0, ge=0)


class NewMemory(Strict):
    scope: Literal["user", "project"]
    user_id: Text | None = None
    project_id: Text | None = None
    content: Text
    created_at: int


class Clock(Strict):
    now: int | None


class FaultSwitches(Strict):
    quota_lookup: bool = False
    memory_lookup: bool = False


class Turn(Strict):
    turn: Literal["first", "continuation", "resume"]


def _where(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc]
    return db.printable(".".join(parts[1:] if parts[:1] == ["body"] and len(parts) > 1
                                 else parts), 80)


def refusal(status: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers=headers or None)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        """What was wrong, for the first few errors, without echoing the input."""
        errors = exc.errors()
        shown = [f"{_where(e.get('loc', ()))}: {db.printable(str(e.get('msg', 'invalid')))}"
                 for e in errors[:MAX_ERRORS_SHOWN]]
        if len(errors) > MAX_ERRORS_SHOWN:
            shown.append(f"and {len(errors) - MAX_ERRORS_SHOWN} more")
        return refusal(422, "; ".join(shown) or "invalid request")

    @app.exception_handler(IntegrityError)
    async def conflict(_request: Request, exc: IntegrityError) -> JSONResponse:
        if not db.conflicting(exc):
            raise exc  # a value validation let through: the service's fault (500)
        return refusal(409, "conflicts with stored data (a duplicate id or a missing "
                            "reference)")

    @app.exception_handler(DataError)
    async def unstorable(_request: Request, _exc: DataError) -> JSONResponse:
        return refusal(422, "a value the database cannot store")

    @app.exception_handler(db.Busy)
    @app.exception_handler(PoolTimeout)
    async def busy(_request: Request, _exc: Exception) -> JSONResponse:
        return refusal(429, "the service is busy: retry shortly", **{
            "Retry-After": RETRY_AFTER_S})


class BodyLimit:
    """Refuse a request body over `limit` bytes with 413: by its Content-Length before reading
    anything, else (a chunked body) as soon as the bytes read pass the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await refusal(413, TOO_LARGE)(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, TOO_LARGE)
            return message

        await self.app(scope, limited, send)


@asynccontextmanager
async def _lifespan(_app: FastAPI) -> AsyncIterator[None]:
    # request threads and the connection pool are sized together (schema.POOL_SIZE)
    anyio.to_thread.current_default_thread_limiter().total_tokens = REQUEST_THREADS
    yield


def create_app(database_url: str, conformance_token: str | None = None) -> FastAPI:
    """The app on `database_url`; the conformance API exists only with a token."""
    service = Service(engine_for(database_url), conformance_token)
    app = FastAPI(title="memref cloud auto-memory", lifespan=_lifespan)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.state.service = service
    _install_error_handlers(app)

    def current_user(authorization: Annotated[str | None, Header()] = None) -> str:
        user = service.read(lambda con: access.user_for(con, authorization))
        if user is None:
            raise HTTPException(401, "missing or unknown bearer token")
        return user

    me = Annotated[str, Depends(current_user)]
    task_path = Annotated[str, AfterValidator(db.check_text)]

    @app.get("/users/me/auto-memory-settings")
    def get_settings(user: me) -> dict[str, Any]:
        return service.read(lambda con: user_settings.read(con, user))

    @app.put("/users/me/auto-memory-settings")
    def put_settings(user: me, body: user_settings.SettingsUpdate) -> dict[str, Any]:
        nulls = sorted(k for k in body.model_fields_set
                       if k in user_settings.NOT_NULL and getattr(body, k) is None)
        if nulls:
            raise HTTPException(422, f"{', '.join(nulls)}: null is not a value for this setting")
        return service.write(lambda con: user_settings.update(con, user, body,
                                                              set(body.model_fields_set)))

    @app.post("/tasks/{task_id}/auto-memory-flags")
    def set_flags(task_id: task_path, user: me, body: FlagsUpdate) -> dict[str, Any]:
        def work(con: Connection) -> dict[str, Any]:
            allowed = access.task_access(con, task_id, user)
            if allowed == "none":
                raise HTTPException(404, f"no task {db.printable(repr(task_id))} in a project "
                                         "of yours")
            if allowed != "creator":
                raise HTTPException(403, "only users who may create tasks in the task's "
                                         "project may set its memory flags")
            db.insert_or_ignore(con, task_flags, ["task_id"], task_id=task_id,
                                use_memories=None, generate_memories=None)
            row = con.execute(select(task_flags).where(task_flags.c.task_id == task_id)
                              .with_for_update(key_share=True)).mappings().one()
            values = {"use_memories": row["use_memories"],
                      "generate_memories": row["generate_memories"]}
            if "use" in body.model_fields_set:
                values["use_memories"] = body.use
            if "generate" in body.model_fields_set:
                values["generate_memories"] = body.generate
            con.execute(task_flags.update().where(task_flags.c.task_id == task_id)
                        .values(**values))
            return {"task_id": task_id, "use": values["use_memories"],
                    "generate": values["generate_memories"]}

        return service.write(work)

    @app.post("/users/me/auto-memory/run")
    def run_now(user: me, body: RunRequest | None = None) -> dict[str, Any]:
        return service.sweep(user_id=user, force=bool(body and body.force))

    @app.get("/users/me/auto-memory-log")
    def get_log(user: me) -> dict[str, Any]:
        def work(con: Connection) -> dict[str, Any]:
            rows = con.execute(select(extraction_log).where(extraction_log.c.user_id == user)
                               .order_by(extraction_log.c.at.desc(), extraction_log.c.task_id))
            return {"entries": [{"task_id": r["task_id"], "outcome": r["outcome"],
                                 "reason": r["reason"], "at": r["at"]}
                                for r in rows.mappings()]}

        return service.read(work)

    if conformance_token:
        _conformance_api(app, service, task_path)
    return app


def _conformance_api(app: FastAPI, service: Service, task_path: Any) -> None:
    """The /conformance routes; `task_path` is the annotated type of a task id in a path."""
    def admin(request: Request) -> None:
        given = request.headers.get("x-conformance-token", "")
        if not secrets.compare_digest(given, service.conformance_token or ""):
            raise HTTPException(401, "conformance token required")

    guarded = [Depends(admin)]

    @app.post("/conformance/reset", dependencies=guarded)
    def reset() -> dict[str, Any]:
        def work(con: Connection) -> None:
            for table in reversed(metadata.sorted_tables):
                con.execute(delete(table))

        service.write(work)
        service.fixed_now, service.faults = None, Faults()
        return {}

    @app.post("/conformance/users", dependencies=guarded)
    def add_user(body: NewUser) -> dict[str, Any]:
        token = secrets.token_hex(16)
        service.write(lambda con: con.execute(insert(users).values(id=body.id, token=token)))
        return {"id": body.id, "token": token}

    @app.post("/conformance/projects", dependencies=guarded)
    def add_project(body: NewProject) -> dict[str, Any]:
        def work(con: Connection) -> None:
            con.execute(insert(projects).values(id=body.id))
            for member in body.members:
                con.execute(insert(members).values(project_id=body.id, **member.model_dump()))

        service.write(work)
        return {"id": body.id}

    @app.post("/conformance/tasks", dependencies=guarded)
    def add_task(body: NewTask) -> dict[str, Any]:
        service.write(lambda con: con.execute(insert(tasks).values(**body.model_dump())))
        return {"id": body.id}

    @app.get("/conformance/tasks/{task_id}", dependencies=guarded)
    def get_task(task_id: task_path) -> dict[str, Any]:
        row = service.read(lambda con: con.execute(
            select(tasks).where(tasks.c.id == task_id)).mappings().first())
        if row is None:
            raise HTTPException(404, f"no task {db.printable(repr(task_id))}")
        return dict(row)

    @app.post("/conformance/quotas", dependencies=guarded)
    def add_quota(body: NewQuota) -> dict[str, Any]:
        service.write(lambda con: con.execute(insert(quotas).values(**body.model_dump())))
        return {}

    @app.post("/conformance/memories", dependencies=guarded)
    def add_memory(body: NewMemory) -> dict[str, Any]:
        result = service.write(lambda con: con.execute(
            insert(memories).values(**body.model_dump(), superseded=False)))
        return {"id": result.inserted_primary_key[0] if result.inserted_primary_key else None}

    @app.get("/conformance/memories", dependencies=guarded)
    def list_memories() -> dict[str, Any]:
        columns = [memories.c[name] for name in ("id", "scope", "project_id", "user_id",
                                                 "source_task_id", "content", "created_at",
                                                 "superseded")]
        return service.read(lambda con: {"memories": [dict(r) for r in con.execute(
            select(*columns).order_by(memories.c.id)).mappings()]})

    @app.get("/conformance/audit", dependencies=guarded)
    def list_audit() -> dict[str, Any]:
        return service.read(lambda con: {"events": [dict(r) for r in con.execute(
            select(audit_events).order_by(audit_events.c.id)).mappings()]})

    @app.post("/conformance/clock", dependencies=guarded)
    def set_clock(body: Clock) -> dict[str, Any]:
        service.fixed_now = body.now
        return {"now": service.now()}

    @app.post("/conformance/faults", dependencies=guarded)
    def set_faults(body: FaultSwitches) -> dict[str, Any]:
        service.faults = Faults(**body.model_dump())
        return {}

    @app.post("/conformance/worker/round", dependencies=guarded)
    def worker_round() -> dict[str, Any]:
        return service.sweep()

    @app.post("/conformance/tasks/{task_id}/turn", dependencies=guarded)
    def play_turn(task_id: task_path, body: Turn) -> dict[str, Any]:
        def work(con: Connection) -> dict[str, Any]:
            row = con.execute(select(tasks).where(tasks.c.id == task_id)).mappings().first()
            if row is None:
                raise HTTPException(404, f"no task {db.printable(repr(task_id))}")
            return inject.turn_input(con, dict(row), body.turn, service.now(), service.faults)

        return service.write(work)

"""The cloud reference service under concurrency, big bodies, bad text and a crash mid-sweep,
on SQLite and on PostgreSQL (issue 15, points 5-9). Services run on loopback and are stopped
by the PID they were started with."""

from __future__ import annotations

import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from memconform.cloud import postgres
from memconform.cloud.service import Service, start
from memref.cloud import extract
from memref.cloud.app import create_app

NOW = 1_800_000_000
TIMEOUT_S = 45.0
pytestmark = pytest.mark.timeout(180)


def _need_postgres(db: str) -> None:
    if db == "postgresql":
        try:
            postgres._binary("initdb")
        except postgres.PostgresError as exc:
            pytest.skip(str(exc))


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest) -> Iterator[Service]:
    _need_postgres(request.param)
    service = start("ref", request.param)
    try:
        yield service
    finally:
        service.stop()


class World:
    """A fresh world on a served service: users with a project and completed tasks each."""

    def __init__(self, service: Service) -> None:
        self.base_url = service.base_url
        self.admin = httpx.Client(base_url=service.base_url, timeout=TIMEOUT_S,
                                  headers={"x-conformance-token": service.token})
        self.call("POST", "/reset")
        self.call("POST", "/clock", {"now": NOW})
        self.tokens: dict[str, str] = {}

    def call(self, method: str, path: str, body: Any = None) -> Any:
        reply = self.admin.request(method, f"/conformance{path}", json=body)
        assert reply.status_code == 200, f"{method} {path}: {reply.status_code} {reply.text}"
        return reply.json()

    def user(self, user: str, tasks: int = 0, generate: bool = True) -> str:
        self.tokens[user] = self.call("POST", "/users", {"id": user})["token"]
        self.call("POST", "/projects", {"id": f"p-{user}", "members": [{"user_id": user}]})
        for t in range(tasks):
            self.call("POST", "/tasks", {
                "id": f"{user}-t{t}", "project_id": f"p-{user}", "user_id": user,
                "status": "completed", "goal": f"goal {t}", "result": "r" * 300,
                "started_at": NOW - 5000, "finished_at": NOW - 2000})
        if generate:
            assert self.as_user(user, "PUT", "/users/me/auto-memory-settings",
                                {"generate_memories": True}).status_code == 200
        return self.tokens[user]

    def as_user(self, user: str, method: str, path: str, body: Any = None,
                content: Any = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        if content is not None:
            headers["content-type"] = "application/json"
        return self.admin.request(method, path, json=body, content=content, headers=headers)

    def sources(self) -> Counter[str]:
        return Counter(m["source_task_id"] for m in self.call("GET", "/memories")["memories"])

    def close(self) -> None:
        self.admin.close()


@pytest.fixture
def world(served: Service) -> Iterator[World]:
    served.check_alive()
    made = World(served)
    yield made
    made.close()
    served.check_alive()


def concurrently(world: World, count: int, method: str, path: str, user: str,
                 body: Any = None) -> list[httpx.Response | str]:
    """`count` requests at once from as many threads (a transport error as its text)."""
    start_together = threading.Barrier(count)

    def one(i: int) -> httpx.Response | str:
        with httpx.Client(base_url=world.base_url, timeout=TIMEOUT_S) as client:
            start_together.wait()
            try:
                return client.request(method, path, json=body(i) if callable(body) else body,
                                      headers={"Authorization": f"Bearer {world.tokens[user]}"})
            except httpx.HTTPError as exc:
                return repr(exc)

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def codes(replies: list[httpx.Response | str]) -> Counter[int | str]:
    return Counter(r.status_code if isinstance(r, httpx.Response) else r for r in replies)


# 5. concurrency ---------------------------------------------------------------------------

def test_100_concurrent_gets_all_answer(world: World) -> None:
    world.user("u", tasks=3)
    assert codes(concurrently(world, 100, "GET", "/users/me/auto-memory-settings", "u")) == {
        200: 100}


def test_50_concurrent_runs_of_one_user_extract_each_task_once(world: World) -> None:
    world.user("u", tasks=8)
    replies = concurrently(world, 50, "POST", "/users/me/auto-memory/run", "u", {"force": True})
    assert codes(replies) == {200: 50}
    extracted = [t for r in replies if isinstance(r, httpx.Response)
                 for t in r.json()["extracted"]]
    assert sorted(extracted) == [f"u-t{t}" for t in range(8)], "a task extracted twice or never"
    assert world.sources() == {f"u-t{t}": 1 for t in range(8)}
    entries = world.as_user("u", "GET", "/users/me/auto-memory-log").json()["entries"]
    assert sorted(e["task_id"] for e in entries) == [f"u-t{t}" for t in range(8)]


def test_50_concurrent_puts_of_one_user_apply_one_after_the_other(world: World) -> None:
    world.user("u", generate=False)
    keys = ["idle_seconds", "min_duration_seconds", "min_result_chars"]
    replies = concurrently(world, 50, "PUT", "/users/me/auto-memory-settings", "u",
                           lambda i: {keys[i % 3]: 1000 + i})
    assert codes(replies) == {200: 50}
    final = world.as_user("u", "GET", "/users/me/auto-memory-settings").json()
    for n, key in enumerate(keys):
        # every PUT kept the keys it did not send: the last one of each key stays
        assert final[key] in {1000 + i for i in range(50) if i % 3 == n}, (key, final)


def test_a_duplicate_id_is_a_409_with_a_message(world: World) -> None:
    world.user("u")
    reply = world.admin.post("/conformance/users", json={"id": "u"})
    assert reply.status_code == 409, reply.text
    assert "conflicts" in reply.json()["detail"]


# 7. body limit, small errors --------------------------------------------------------------

def test_a_body_over_1_mib_is_a_413_with_a_short_message(world: World) -> None:
    world.user("u", generate=False)
    body = json.dumps({f"k{i}": i for i in range(200_000)}).encode()
    assert len(body) > 1024 * 1024
    began = time.monotonic()
    reply = world.as_user("u", "PUT", "/users/me/auto-memory-settings", content=body)
    assert reply.status_code == 413, reply.text[:300]
    assert len(reply.content) < 200 and "1 MiB" in reply.json()["detail"]
    assert time.monotonic() - began < 5

    def chunks() -> Iterator[bytes]:  # no Content-Length: refused once past the limit
        for start_at in range(0, len(body), 64 * 1024):
            yield body[start_at:start_at + 64 * 1024]

    reply = world.as_user("u", "PUT", "/users/me/auto-memory-settings", content=chunks())
    assert reply.status_code == 413, reply.text[:300]
    assert world.as_user("u", "GET", "/users/me/auto-memory-settings").json()[
        "idle_seconds"] == 900


def test_a_big_invalid_body_gets_a_small_error(world: World) -> None:
    world.user("u", generate=False)
    body = json.dumps({f"unknown_key_{i}": "x" * 40 for i in range(15_000)}).encode()
    assert 512 * 1024 < len(body) < 1024 * 1024
    began = time.monotonic()
    reply = world.as_user("u", "PUT", "/users/me/auto-memory-settings", content=body)
    assert reply.status_code == 422
    assert len(reply.content) < 2000, len(reply.content)
    assert "unknown_key_0" in reply.json()["detail"] and "14995 more" in reply.json()["detail"]
    assert "x" * 40 not in reply.text, "the refused input was echoed back"
    assert time.monotonic() - began < 10


# 8. bad text ------------------------------------------------------------------------------

BAD_TEXT = {"lone-surrogate": b'"\\ud800"', "raw-surrogate": b'"m\xed\xa0\x80"',
            "nul": b'"model\\u0000x"'}


@pytest.mark.parametrize("text", BAD_TEXT.values(), ids=list(BAD_TEXT))
@pytest.mark.parametrize("key", ["extract_model", "consolidation_model"])
def test_bad_text_in_a_model_name_is_a_422(world: World, key: str, text: bytes) -> None:
    world.user("u", generate=False)
    reply = world.as_user("u", "PUT", "/users/me/auto-memory-settings",
                          content=b'{"%s": %s}' % (key.encode(), text))
    assert reply.status_code == 422, reply.text
    assert reply.json() == {
        "detail": f"{key}: Value error, text must be valid Unicode without NUL characters"}
    assert world.as_user("u", "GET", "/users/me/auto-memory-settings").json()[key] is None


def test_bad_text_in_a_key_or_a_wrong_typed_value_is_a_422(world: World) -> None:
    world.user("u", generate=False)
    for body in (b'{"\\ud800": 1}', b'{"idle_seconds": "\\ud800"}', b'{"a\\u0000": 1}'):
        reply = world.as_user("u", "PUT", "/users/me/auto-memory-settings", content=body)
        assert reply.status_code == 422, (body, reply.status_code, reply.text)
        assert reply.json()["detail"]


def test_a_nul_in_a_path_id_is_a_422(world: World) -> None:
    world.user("u")
    reply = world.as_user("u", "POST", "/tasks/t%00x/auto-memory-flags", {"use": True})
    assert reply.status_code == 422, reply.text
    assert reply.json() == {
        "detail": "path.task_id: Value error, text must be valid Unicode without NUL "
                  "characters"}
    reply = world.admin.get("/conformance/tasks/t%00x")
    assert reply.status_code == 422, reply.text


# 6. sweeps commit per task ----------------------------------------------------------------

def _app_world(tmp_path: Path, tasks: int = 5) -> tuple[TestClient, dict[str, str]]:
    client = TestClient(create_app(f"sqlite:///{tmp_path / 'c.sqlite'}", "tok"),
                        headers={"x-conformance-token": "tok"}, raise_server_exceptions=False)
    tokens = {}
    for user, count in (("a", tasks), ("b", 0)):
        tokens[user] = client.post("/conformance/users", json={"id": user}).json()["token"]
        client.post("/conformance/projects", json={"id": f"p-{user}",
                                                   "members": [{"user_id": user}]})
        for t in range(count):
            assert client.post("/conformance/tasks", json={
                "id": f"{user}-t{t}", "project_id": f"p-{user}", "user_id": user,
                "status": "completed", "goal": f"goal {t}", "result": "r" * 300,
                "started_at": 0, "finished_at": 1000 + t}).status_code == 200
        assert client.put("/users/me/auto-memory-settings", json={"generate_memories": True},
                          headers={"Authorization": f"Bearer {tokens[user]}"}
                          ).status_code == 200
    return client, tokens


def test_a_crash_mid_sweep_keeps_the_tasks_done(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = _app_world(tmp_path)
    original = extract.store

    def store(con: Any, task: dict[str, Any], now: int) -> None:
        if task["id"] == "a-t3":
            raise RuntimeError("the worker died")
        original(con, task, now)

    monkeypatch.setattr(extract, "store", store)
    assert client.post("/conformance/worker/round").status_code == 500
    kept = [m["source_task_id"] for m in client.get("/conformance/memories").json()["memories"]]
    assert kept == ["a-t0", "a-t1", "a-t2"], "the tasks done before the crash were lost"
    monkeypatch.setattr(extract, "store", original)
    assert client.post("/conformance/worker/round").json()["extracted"] == ["a-t3", "a-t4"]


def test_another_users_put_is_not_blocked_by_a_sweep(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep of 150 tasks at 20 ms each (3 s): another user's PUT in the middle of it answers
    in well under a second, while the sweep is still running (SQLite: one writer at a time)."""
    client, tokens = _app_world(tmp_path, tasks=150)
    original, underway = extract.store, threading.Event()

    def store(con: Any, task: dict[str, Any], now: int) -> None:
        original(con, task, now)
        underway.set()
        time.sleep(0.02)

    monkeypatch.setattr(extract, "store", store)
    sweeping = threading.Thread(target=lambda: client.post("/conformance/worker/round"))
    sweeping.start()
    try:
        assert underway.wait(10)
        time.sleep(0.3)
        began = time.monotonic()
        reply = client.put("/users/me/auto-memory-settings", json={"idle_seconds": 5},
                           headers={"Authorization": f"Bearer {tokens['b']}"})
        waited = time.monotonic() - began
        still_sweeping = sweeping.is_alive()
    finally:
        sweeping.join(60)
    assert reply.status_code == 200
    assert still_sweeping, "the sweep ended before the PUT: the test proves nothing"
    assert waited < 1.0, f"another user's PUT waited {waited:.1f} s behind the sweep"
    assert len(client.get("/conformance/memories").json()["memories"]) == 150


# 9. readiness -----------------------------------------------------------------------------

def test_listening_on_is_printed_once_connections_are_served(tmp_path: Path) -> None:
    for attempt in range(5):
        server = subprocess.Popen(
            [sys.executable, "-m", "memref.cloud.serve", "--db",
             f"sqlite:///{tmp_path / f'r{attempt}.db'}"], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert line.startswith("listening on http://127.0.0.1:"), line
            host, port = line.split("//")[1].strip().split(":")
            with socket.create_connection((host, int(port)), timeout=5):
                pass  # refused (ECONNREFUSED) if printed before the socket listens
            reply = httpx.get(f"{line.split()[-1]}/users/me/auto-memory-settings", timeout=5)
            assert reply.status_code == 401
        finally:
            server.terminate()
            server.wait(10)


LATE_SERVER = """
import socket, sys, time
import uvicorn
from memref.cloud.app import create_app

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
time.sleep(1.5)  # announced before it listens, as the reference once did
uvicorn.Server(uvicorn.Config(create_app(args["--db"], args["--conformance-token"]),
                              log_level="warning")).run(sockets=[sock])
"""


def test_the_harness_waits_until_the_service_answers(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "late_server.py").write_text(LATE_SERVER, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    service = start("serve:late_server", "sqlite")
    try:
        reply = httpx.post(f"{service.base_url}/conformance/reset", timeout=5,
                           headers={"x-conformance-token": service.token})
        assert reply.status_code == 200
    finally:
        service.stop()


# 5. collisions are retried, then refused with 429 -----------------------------------------

def test_a_write_that_keeps_colliding_is_retried_then_a_429(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import sqlite3

    from sqlalchemy.exc import OperationalError

    from memref.cloud import settings as user_settings

    client, tokens = _app_world(tmp_path, tasks=0)
    original, failures = user_settings.update, [2]

    def update(*args: Any) -> dict[str, Any]:
        if failures[0]:
            failures[0] -= 1
            raise OperationalError("UPDATE", {}, sqlite3.OperationalError("database is locked"))
        return original(*args)

    monkeypatch.setattr(user_settings, "update", update)
    headers = {"Authorization": f"Bearer {tokens['b']}"}
    reply = client.put("/users/me/auto-memory-settings", json={"idle_seconds": 7},
                       headers=headers)
    assert reply.status_code == 200 and reply.json()["idle_seconds"] == 7, "not retried"
    failures[0] = 1_000
    reply = client.put("/users/me/auto-memory-settings", json={"idle_seconds": 8},
                       headers=headers)
    assert reply.status_code == 429, reply.text
    assert reply.headers["retry-after"] == "1"
    assert reply.json() == {"detail": "the service is busy: retry shortly"}
    assert client.get("/users/me/auto-memory-settings", headers=headers).json()[
        "idle_seconds"] == 7

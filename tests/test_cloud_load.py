"""A bounded load test of the cloud reference service, on SQLite and on PostgreSQL: loopback
only, a fixed number of requests, every request bounded in time, and the service it starts
stopped by its PID. 200 concurrent GETs, then 100 concurrent writes across 10 users (settings,
flags, manual runs): no 5xx, no lost or duplicated rows; p50/p99 latency printed per backend."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memconform.cloud import postgres
from memconform.cloud.service import Service, start

USERS = 10
TASKS_PER_USER = 6
READS = 200
WRITES = 100
REQUEST_TIMEOUT_S = 45.0
NOW = 1_800_000_000
pytestmark = pytest.mark.timeout(150)


@pytest.fixture(params=["sqlite", "postgresql"])
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    if request.param == "postgresql":
        try:
            postgres._binary("initdb")
        except postgres.PostgresError as exc:
            pytest.skip(str(exc))
    started = start("ref", request.param)
    assert started.process is not None and started.base_url.startswith("http://127.0.0.1:")
    try:
        yield started
    finally:
        started.stop()  # terminate (then kill) by the PID it started
        assert started.process.poll() is not None


def seed(admin: httpx.Client) -> dict[str, str]:
    """10 users, each with a project of their own and 6 completed tasks; generation on."""
    def call(method: str, path: str, body: Any = None) -> Any:
        reply = admin.request(method, f"/conformance{path}", json=body)
        assert reply.status_code == 200, f"{method} {path}: {reply.status_code} {reply.text}"
        return reply.json()

    call("POST", "/reset")
    call("POST", "/clock", {"now": NOW})
    tokens = {}
    for u in range(USERS):
        user = f"u{u}"
        tokens[user] = call("POST", "/users", {"id": user})["token"]
        call("POST", "/projects", {"id": f"p{u}", "members": [{"user_id": user}]})
        for t in range(TASKS_PER_USER):
            call("POST", "/tasks", {
                "id": f"{user}-t{t}", "project_id": f"p{u}", "user_id": user,
                "status": "completed", "goal": f"goal {user} {t}", "result": "r" * 300,
                "started_at": NOW - 5000, "finished_at": NOW - 2000})
        reply = admin.put("/users/me/auto-memory-settings", json={"generate_memories": True},
                          headers={"Authorization": f"Bearer {tokens[user]}"})
        assert reply.status_code == 200, reply.text
    return tokens


async def storm(base_url: str, requests: list[tuple[str, str, str, Any]]
                ) -> list[tuple[int, float, str]]:
    """All `requests` (method, path, token, body) at once: (status, seconds, path) each; a
    transport error counts as status 0."""
    limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base_url, timeout=REQUEST_TIMEOUT_S,
                                 limits=limits) as client:
        gate = asyncio.Event()

        async def one(method: str, path: str, token: str, body: Any) -> tuple[int, float, str]:
            await gate.wait()
            began = time.perf_counter()
            try:
                reply = await client.request(method, path, json=body,
                                             headers={"Authorization": f"Bearer {token}"})
                status = reply.status_code
            except httpx.HTTPError:
                status = 0
            return status, time.perf_counter() - began, path

        tasks = [asyncio.create_task(one(*r)) for r in requests]
        await asyncio.sleep(0.05)
        gate.set()
        return list(await asyncio.gather(*tasks))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def test_load(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    admin = httpx.Client(base_url=service.base_url, timeout=REQUEST_TIMEOUT_S,
                         headers={"x-conformance-token": service.token})
    tokens = seed(admin)
    users = sorted(tokens)
    began = time.monotonic()
    reads = [("GET", "/users/me/auto-memory-settings" if i % 2 else "/users/me/auto-memory-log",
              tokens[users[i % USERS]], None) for i in range(READS)]
    read_results = asyncio.run(storm(service.base_url, reads))

    written: dict[str, set[int]] = {u: set() for u in users}
    writes: list[tuple[str, str, str, Any]] = []
    for i in range(WRITES):
        user = users[i % USERS]
        kind = (i // USERS) % 3
        if kind == 0:
            idle = 60 + i
            written[user].add(idle)
            writes.append(("PUT", "/users/me/auto-memory-settings", tokens[user],
                           {"idle_seconds": idle}))
        elif kind == 1:
            writes.append(("POST", "/users/me/auto-memory/run", tokens[user], {"force": True}))
        else:
            writes.append(("POST", f"/tasks/{user}-t{i % TASKS_PER_USER}/auto-memory-flags",
                           tokens[user], {"use": True}))
    write_results = asyncio.run(storm(service.base_url, writes))
    elapsed = time.monotonic() - began

    results = read_results + write_results
    statuses = Counter(status for status, _, _ in results)
    seconds = [s for _, s, _ in results]
    db = "postgresql" if service.cluster is not None else "sqlite"
    with capsys.disabled():
        print(f"\n[cloud load {db}] {len(results)} requests ({READS} GETs, {WRITES} writes) in "
              f"{elapsed:.1f} s: statuses {dict(sorted(statuses.items()))}, "
              f"5xx {sum(n for s, n in statuses.items() if s >= 500)}, "
              f"p50 {percentile(seconds, 50) * 1000:.0f} ms, "
              f"p99 {percentile(seconds, 99) * 1000:.0f} ms, "
              f"mean {statistics.fmean(seconds) * 1000:.0f} ms")
    service.check_alive()
    assert not [r for r in results if r[0] >= 500 or r[0] == 0], \
        f"server errors or dropped requests: {dict(statuses)}"
    assert statuses == {200: READS + WRITES}, f"refused requests: {dict(statuses)}"

    # no lost or duplicated rows
    sources = Counter(m["source_task_id"] for m in admin.get("/conformance/memories").json()[
        "memories"])
    expected = {f"{u}-t{t}" for u in users for t in range(TASKS_PER_USER)}
    assert set(sources) == expected, "a task was not extracted"
    twice = [source for source, n in sources.items() if n > 1]
    assert not twice, f"extracted twice: {twice}"
    for user in users:
        headers = {"Authorization": f"Bearer {tokens[user]}"}
        got = admin.get("/users/me/auto-memory-settings", headers=headers).json()
        assert got["generate_memories"] is True, f"{user}: a PUT lost an unsent setting"
        assert got["idle_seconds"] in written[user], f"{user}: {got['idle_seconds']}"
        entries = admin.get("/users/me/auto-memory-log", headers=headers).json()["entries"]
        assert sorted(e["task_id"] for e in entries) == sorted(
            f"{user}-t{t}" for t in range(TASKS_PER_USER)), f"{user}: log {entries}"
        assert {e["outcome"] for e in entries} == {"extracted"}
    admin.close()

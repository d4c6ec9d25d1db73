"""A client for a cloud service: the public API as one user (bearer token), and the
conformance API that seeds data, moves time and plays turns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

TIMEOUT_S = 30.0


class ConformanceApiError(RuntimeError):
    """The service refused a conformance request: a setup step broke, so the check reports
    `error`, not a verdict."""


@dataclass
class User:
    id: str
    token: str
    http: httpx.Client

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get_settings(self) -> httpx.Response:
        return self.http.get("/users/me/auto-memory-settings", headers=self._headers())

    def put_settings(self, body: Any) -> httpx.Response:
        return self.http.put("/users/me/auto-memory-settings", headers=self._headers(),
                             json=body)

    def settings(self, **values: Any) -> dict[str, Any]:
        """Set values that must be accepted; the settings afterwards."""
        reply = self.put_settings(values)
        assert reply.status_code == 200, f"PUT settings {values}: {reply.status_code} {reply.text}"
        return dict(reply.json())

    def set_flags(self, task_id: str, body: Any) -> httpx.Response:
        return self.http.post(f"/tasks/{task_id}/auto-memory-flags", headers=self._headers(),
                              json=body)

    def run(self, force: bool | None = None) -> httpx.Response:
        body = {} if force is None else {"force": force}
        return self.http.post("/users/me/auto-memory/run", headers=self._headers(), json=body)

    def log(self) -> list[dict[str, Any]]:
        reply = self.http.get("/users/me/auto-memory-log", headers=self._headers())
        assert reply.status_code == 200, f"GET log: {reply.status_code} {reply.text}"
        return list(reply.json()["entries"])


class Cloud:
    """One service; `reset()` empties it before each check."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=TIMEOUT_S)
        self.token = token

    def close(self) -> None:
        self.http.close()

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        reply = self.http.request(method, f"/conformance{path}", json=body,
                                  headers={"x-conformance-token": self.token})
        if reply.status_code >= 300:
            raise ConformanceApiError(f"{method} /conformance{path}: {reply.status_code} "
                                      f"{reply.text[:500]}")
        return reply.json()

    def reset(self) -> None:
        self.admin("POST", "/reset")

    def user(self, user_id: str) -> User:
        return User(user_id, self.admin("POST", "/users", {"id": user_id})["token"], self.http)

    def project(self, project_id: str, *members: str, viewers: tuple[str, ...] = ()) -> None:
        """A project; `members` may create tasks in it, `viewers` may not."""
        self.admin("POST", "/projects", {"id": project_id, "members": [
            *({"user_id": m, "can_create_tasks": True} for m in members),
            *({"user_id": v, "can_create_tasks": False} for v in viewers)]})

    def task(self, task_id: str, **fields: Any) -> None:
        self.admin("POST", "/tasks", {"id": task_id, **fields})

    def quota(self, user_id: str, month: str, limit_units: int | None, used_units: int) -> None:
        self.admin("POST", "/quotas", {"user_id": user_id, "month": month,
                                       "limit_units": limit_units, "used_units": used_units})

    def memory(self, **fields: Any) -> int:
        return int(self.admin("POST", "/memories", fields)["id"])

    def clock(self, now: int) -> None:
        self.admin("POST", "/clock", {"now": now})

    def faults(self, **switches: bool) -> None:
        self.admin("POST", "/faults", switches)

    def worker_round(self) -> dict[str, Any]:
        return dict(self.admin("POST", "/worker/round"))

    def turn(self, task_id: str, turn: str) -> dict[str, Any]:
        return dict(self.admin("POST", f"/tasks/{task_id}/turn", {"turn": turn}))

    def stored_task(self, task_id: str) -> dict[str, Any]:
        return dict(self.admin("GET", f"/tasks/{task_id}"))

    def memories(self) -> list[dict[str, Any]]:
        return list(self.admin("GET", "/memories")["memories"])

    def audit(self) -> list[dict[str, Any]]:
        return list(self.admin("GET", "/audit")["events"])

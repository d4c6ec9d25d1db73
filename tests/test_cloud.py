"""The cloud profile's harness side and the reference service's edges: external services by
URL, bad specs, the conformance API switched off, PostgreSQL clusters."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from conftest import run_cli, statuses
from memconform.cloud import postgres
from memconform.cloud.service import TOKEN_ENV, CloudSpecError, db_label, start
from memref.cloud.app import create_app


def test_conformance_api_exists_only_with_a_token(tmp_path: Path) -> None:
    client = TestClient(create_app(f"sqlite:///{tmp_path / 'a.sqlite'}"))
    assert client.post("/conformance/reset").status_code == 404
    guarded = TestClient(create_app(f"sqlite:///{tmp_path / 'b.sqlite'}", "secret"))
    assert guarded.post("/conformance/reset").status_code == 401
    assert guarded.post("/conformance/reset", headers={
        "x-conformance-token": "secret"}).status_code == 200


def test_serve_refuses_an_unusable_database() -> None:
    done = subprocess.run([sys.executable, "-m", "memref.cloud.serve", "--db", "nope://x"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "cannot open the database 'nope://x'" in done.stderr


@pytest.mark.parametrize(("impl", "db", "message"), [
    ("python:memref.adapter:factory", "sqlite", "the cloud profile takes"),
    ("ref", "mysql", "expected sqlite, postgresql or a URL"),
    ("http://127.0.0.1:9", "sqlite", TOKEN_ENV)])
def test_bad_cloud_specs(monkeypatch: pytest.MonkeyPatch, impl: str, db: str,
                         message: str) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(CloudSpecError, match=message):
        start(impl, db)


def test_a_running_service_is_checked_by_url(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "memref.cloud.serve", "--db", f"sqlite:///{tmp_path / 'c.db'}",
         "--conformance-token", "tok"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        env = {**os.environ, TOKEN_ENV: "tok"}
        done = subprocess.run([sys.executable, "-m", "memconform", "run", "--profile", "cloud",
                               "--impl", url, "--area", "cloud.settings", "--report-dir",
                               str(tmp_path / "r"), "-q"], env=env, cwd=tmp_path, text=True,
                              capture_output=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        seen = statuses(tmp_path / "r")
        assert len(seen) >= 25 and set(seen.values()) == {"pass"}
    finally:
        server.terminate()
        server.wait(10)


def test_cloud_profile_cli_usage_error(tmp_path: Path) -> None:
    result = run_cli("run", "--profile", "cloud", "--impl", "nope", "--report-dir",
                     str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the cloud profile takes" in result.stdout + result.stderr


def test_postgres_cluster_starts_and_goes(tmp_path: Path) -> None:
    try:
        cluster = postgres.start()
    except postgres.PostgresError as exc:
        if "not found" in str(exc):
            pytest.skip(str(exc))
        raise
    try:
        client = TestClient(create_app(cluster.url, "t"))
        assert client.post("/conformance/users", json={"id": "u"},
                           headers={"x-conformance-token": "t"}).status_code == 200
    finally:
        client.app.state.service.engine.dispose()  # type: ignore[attr-defined]
        cluster.stop()
    assert not cluster.directory.exists()


def test_worker_loop_extracts_without_being_asked(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "memref.cloud.serve", "--db", f"sqlite:///{tmp_path / 'w.db'}",
         "--conformance-token", "tok", "--worker-interval", "0.2"], stdout=subprocess.PIPE,
        text=True)
    try:
        assert server.stdout is not None
        admin = httpx.Client(base_url=server.stdout.readline().split()[-1],
                             headers={"x-conformance-token": "tok"}, timeout=10)
        token = admin.post("/conformance/users", json={"id": "u"}).json()["token"]
        admin.put("/users/me/auto-memory-settings", json={"generate_memories": True},
                  headers={"Authorization": f"Bearer {token}"}).raise_for_status()
        admin.post("/conformance/projects", json={"id": "p", "members": [{"user_id": "u"}]})
        admin.post("/conformance/tasks", json={
            "id": "t", "project_id": "p", "user_id": "u", "status": "completed",
            "goal": "g", "result": "r" * 300, "started_at": 0, "finished_at": 100})
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not admin.get("/conformance/memories").json()[
                "memories"]:
            time.sleep(0.1)
        assert [m["source_task_id"] for m in admin.get("/conformance/memories").json()[
            "memories"]] == ["t"]
    finally:
        server.terminate()
        server.wait(10)


def test_a_crashed_service_is_named_with_its_stderr_and_its_files_go() -> None:
    service = start("ref", "sqlite")
    scratch = service.scratch
    assert scratch is not None and scratch.exists()
    service.check_alive()
    assert service.process is not None
    service.process.kill()
    service.process.wait(10)
    with pytest.raises(RuntimeError, match="cloud service exited with status -9"):
        service.check_alive()
    service.stop()
    assert not scratch.exists()


@pytest.mark.parametrize(("db", "label"), [
    ("sqlite", "sqlite"), ("postgresql", "postgresql"),
    ("postgresql+psycopg://bench:s3cret@db.example:5432/memories", "postgresql+psycopg")])
def test_reports_show_no_database_password(db: str, label: str) -> None:
    assert db_label(db) == label

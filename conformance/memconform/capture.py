"""A check's observable end state, for comparing two implementations (`memconform diff`).

`--capture-state DIR` writes `DIR/<check id>.json` after every check, whatever its status:
every row of each SQLite file in the Codex home with its table's primary key (`db`), every
file under the memory root with its text (`files`; `.git` left out, its HEAD commit read as
`git`), every request the mock model received (`requests`, named `<kind>#<n>` in the order
received: path and body) and the adapter's answers (`answers`: op and result).
Temporary directories and ports are normalized as in the records; ids and times are left as
they are (the comparison normalizes them, see `memconform.differential`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from memconform.bundles import directory_name
from memconform.rendering import Normalizer

TEXT_LIMIT = 8 * 1024 * 1024


def _rows(path: Path) -> dict[str, Any]:
    """Table → {"key": primary-key columns, "rows": every row}."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return {"<error>": {"key": [], "rows": [{"error": str(exc)}]}}
    try:
        con.row_factory = sqlite3.Row
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name")]
        out: dict[str, Any] = {}
        for table in tables:
            info = con.execute(f'PRAGMA table_info("{table}")').fetchall()
            key = [r["name"] for r in sorted(info, key=lambda r: r["pk"]) if r["pk"]]
            rows = [{k: (v.hex() if isinstance(v, bytes) else v) for k, v in dict(r).items()}
                    for r in con.execute(f'SELECT * FROM "{table}"')]
            out[table] = {"key": key, "rows": rows}
        return out
    except sqlite3.Error as exc:
        return {"<error>": {"key": [], "rows": [{"error": str(exc)}]}}
    finally:
        con.close()


def _files(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if ".git" in path.relative_to(root).parts:
            continue
        if path.is_symlink():
            out[rel] = f"<symlink to {os.readlink(path)}>"
        elif path.is_file():
            data = path.read_bytes()
            if len(data) > TEXT_LIMIT:
                out[rel] = f"<{len(data)} bytes>"
            else:
                out[rel] = data.decode("utf-8", errors="backslashreplace")
    return out


def _commit(root: Path) -> dict[str, Any] | None:
    if not (root / ".git").exists():
        return None
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CEILING_DIRECTORIES": str(root.parent)}
    done = subprocess.run(["git", "-C", str(root), "cat-file", "commit", "HEAD"], env=env,
                          capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        return None
    # the tree and parent hashes follow from the files; identity, time and message matter
    head, _, message = done.stdout.decode("utf-8", "replace").partition("\n\n")
    commit: dict[str, Any] = {"message": message}
    for line in head.split("\n"):
        role, _, rest = line.partition(" ")
        if role in ("author", "committer"):
            who, _, stamp = rest.rpartition(">")
            seconds, _, zone = stamp.strip().partition(" ")
            commit[role] = who + ">"
            commit[f"{role}_time"] = int(seconds) if seconds.isdigit() else seconds
            commit[f"{role}_zone"] = zone
    return commit


def _answers(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, op = [], None
    for entry in transcript:
        if "request" in entry:
            op = entry["request"].get("op")
        elif "response" in entry:
            try:
                reply = json.loads(entry["response"])
            except json.JSONDecodeError:
                reply = {"raw": entry["response"]}
            out.append({"op": op, "ok": reply.get("ok"),
                        "result": reply.get("result", reply.get("error"))})
    return out


def state(home: Path | None, model: Any, transcript: list[dict[str, Any]], *,
          now_ms: int | None = None) -> dict[str, Any]:
    """The end state of one check (see the module docstring); `now_ms` is the harness clock
    the check's home was built against."""
    db: dict[str, Any] = {}
    files: dict[str, str] = {}
    commit = None
    if home is not None and home.is_dir():
        for path in sorted(home.glob("*.sqlite")):
            db[path.name] = _rows(path)
        files = _files(home / "memories")
        files.update({f"memories_v2/{name}": text  # layout v2's root, when there is one
                      for name, text in _files(home / "memories_v2").items()})
        commit = _commit(home / "memories") or _commit(home / "memories_v2")
    requests: dict[str, Any] = {}
    if model is not None:
        for r in sorted(model.requests, key=lambda r: r.seq):
            number = sum(1 for name in requests if name.startswith(f"{r.kind}#")) + 1
            requests[f"{r.kind}#{number}"] = {"path": r.path, "body": r.body}
    return {"now_ms": now_ms, "db": db, "files": files, "git": commit, "requests": requests,
            "answers": _answers(transcript)}


def write(out: Path, check_id: str, status: str, snapshot: dict[str, Any],
          normalize: Normalizer) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{directory_name(check_id)}.json"
    text = json.dumps({"id": check_id, "status": status, "state": snapshot},
                      ensure_ascii=False, sort_keys=True, default=str)
    target.write_text(normalize(text) + "\n", encoding="utf-8")
    return target


def load(directory: Path) -> dict[str, dict[str, Any]]:
    """Check id → {"status", "state"} of every capture in `directory`."""
    out = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[data["id"]] = data
    return out

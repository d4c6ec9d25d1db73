"""`memconform drift`: what changed from one Codex release's report to the next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli


def write_report(folder: Path, version: str, records: list[dict[str, Any]],
                 layout: str | None = None) -> Path:
    folder.mkdir(parents=True)
    implementation: dict[str, Any] = {"name": "codex-cli", "version": version,
                                      "spec": f"codex@{version}"}
    if layout is not None:
        implementation["follows"] = {"codex": version, "layout": layout}
    header = {"type": "header", "implementation": implementation,
              "config": {"impl": f"codex@{version}"}}
    lines = [header, *({"type": "check", "area": "phase2", "level": "MUST",
                        "rules": ["P2-RUN-01"], "title": "t " + r["id"], "sentence": "",
                        **r} for r in records),
             {"type": "footer", "complete": True}]
    path = folder / "report.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_drift_lists_status_and_reason_changes_per_pair(tmp_path: Path) -> None:
    xfail = {"status": "xfail", "expectation": {"key": "b", "status": "fail",
                                                "reason": "validated since 0.155.0"}}
    old = write_report(tmp_path / "a", "0.144.6", [
        {"id": "a", "status": "pass"}, {"id": "b", "status": "pass"},
        {"id": "c", "status": "xfail", "expectation": {"reason": "old reason"}},
        {"id": "gone", "status": "pass"}])
    mid = write_report(tmp_path / "b", "0.155.0", [
        {"id": "a", "status": "pass"}, {"id": "b", **xfail},
        {"id": "c", "status": "xfail", "expectation": {"reason": "new reason"}}])
    new = write_report(tmp_path / "c", "0.171.0", [
        {"id": "a", "status": "fail", "sentence": "the job ended error"}, {"id": "b", **xfail},
        {"id": "c", "status": "xfail", "expectation": {"reason": "new reason"}}])
    out = tmp_path / "DRIFT.md"
    result = run_cli("drift", str(old), str(mid), str(new), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    first, second = text.split("## codex-cli 0.144.6 → codex-cli 0.155.0: 3 change(s)")[1] \
        .split("## codex-cli 0.155.0 → codex-cli 0.171.0: 1 change(s)")
    assert "- `b` (MUST; P2-RUN-01) pass → xfail: t b. validated since 0.155.0" in first
    assert "- `c` (MUST; P2-RUN-01) xfail → xfail: t c. new reason" in first
    assert "- `gone` (MUST; P2-RUN-01) pass → absent" in first
    assert "`a`" not in first
    assert second.strip() == "- `a` (MUST; P2-RUN-01) pass → fail: t a. the job ended error"
    assert "| codex-cli 0.171.0 | `codex@0.171.0` | 0 | 1 | 0 | 2 | 0 | 0 |" in text


def test_drift_needs_two_complete_reports(tmp_path: Path) -> None:
    one = write_report(tmp_path / "a", "0.144.6", [{"id": "a", "status": "pass"}])
    result = run_cli("drift", str(one), cwd=tmp_path)
    assert result.returncode == 2
    assert "at least two" in result.stderr
    cut = tmp_path / "cut.jsonl"
    cut.write_text(one.read_text(encoding="utf-8").rsplit("{", 1)[0], encoding="utf-8")
    result = run_cli("drift", str(one), str(cut), cwd=tmp_path)
    assert result.returncode == 2
    assert "incomplete" in result.stderr


def test_matrix_refuses_an_unknown_release(tmp_path: Path) -> None:
    result = run_cli("matrix", "--release", "0.150.0", cwd=tmp_path)
    assert result.returncode == 2
    assert "Codex 0.150.0 is not a release memconform knows" in result.stderr


def test_matrix_refuses_a_layout_the_release_lacks(tmp_path: Path) -> None:
    result = run_cli("matrix", "--release", "0.144.6/v2", cwd=tmp_path)
    assert result.returncode == 2
    assert "Codex 0.144.6 has no memory layout 'v2'" in result.stderr


def test_drift_compares_each_layout_among_its_releases(tmp_path: Path) -> None:
    reports = [write_report(tmp_path / name, version, [{"id": "a", "status": status}], layout)
               for name, version, layout, status in (
                   ("a", "0.144.6", None, "pass"), ("b", "0.155.0", "v1", "fail"),
                   ("c", "0.155.0", "v2", "pass"), ("d", "0.171.0", "v2", "fail"))]
    result = run_cli("drift", *map(str, reports), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "## codex-cli 0.144.6 → codex-cli 0.155.0: 1 change(s)" in text
    assert "## codex-cli 0.155.0 (layout v2) → codex-cli 0.171.0 (layout v2): 1 change(s)" \
        in text
    assert "0.155.0 → codex-cli 0.155.0 (layout v2)" not in text

"""Unit tests of the reference's Phase-2 helpers: stems, the workspace, extension retention."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memref import workspace
from memref.extensions import prune_resources, resource_time
from memref.materialize import summary_stem
from memref.phase2 import completion_watermark
from memref.selection import Selected

V7 = "0194f5a6-89ab-7cde-8123-456789abcdef"


@pytest.mark.parametrize("spelling", [V7, V7.upper(), V7.replace("-", ""), f"{{{V7}}}",
                                      f"urn:uuid:{V7}"])
def test_stem_accepts_the_uuid_spellings_rust_accepts(spelling: str) -> None:
    assert summary_stem(spelling, 0, None) == "2025-02-11T15-35-19-jqmb"


def test_stem_treats_oddly_hyphenated_ids_as_plain_text() -> None:
    odd = "01-94f5a6-89ab-7cde-8123-456789abcdef"
    assert summary_stem(odd, 86_400, None).startswith("1970-01-02T00-00-00-")


def test_workspace_statuses_and_reset(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    root.mkdir()
    (root / "a.md").write_text("a\n")
    (root / "b.md").write_text("b\n")
    workspace.prepare(root, 1_780_000_000)
    assert not workspace.diff(root).has_changes
    (root / "a.md").unlink()
    os.symlink("b.md", root / "a.md")  # a type change reports as M
    (root / "b.md").unlink()
    (root / "c.md").write_text("c\n")
    assert workspace.diff(root).changes == [("M", "a.md"), ("D", "b.md"), ("A", "c.md")]
    workspace.write_diff_file(root, workspace.diff(root))
    workspace.reset(root, 1_780_000_100)
    assert not (root / workspace.DIFF_FILE).exists()
    assert not workspace.diff(root).has_changes


def test_diff_file_bound_cuts_on_a_character_boundary() -> None:
    text = "+" + "é" * (workspace.MAX_DIFF_BYTES // 2) + "\n"
    rendered = workspace.render_diff_file(workspace.Diff([("M", "MEMORY.md")], text))
    assert "- M MEMORY.md\n" in rendered
    assert rendered.endswith(f"\n[workspace diff truncated at {workspace.MAX_DIFF_BYTES} "
                             "bytes]\n```\n")
    assert "\ufffd" not in rendered


def test_resource_times_and_symlinks_are_left_alone(tmp_path: Path) -> None:
    assert resource_time("2026-04-07T12-00-00-note.md") == 1_775_563_200
    assert resource_time("2026-04-07T12-00-00-note.txt") is None
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "2020-01-01T00-00-00-x.md").write_text("keep")
    ext = tmp_path / "memories" / "extensions" / "linked"
    ext.mkdir(parents=True)
    (ext / "instructions.md").write_text("i")
    os.symlink(outside, ext / "resources")
    prune_resources(tmp_path / "memories", 1_780_000_000)
    assert (outside / "2020-01-01T00-00-00-x.md").exists()


def test_completion_watermark() -> None:
    def sel(source: int) -> Selected:
        return Selected("t", source, "r", "s", None, "/", "/r", None)

    assert completion_watermark(1000, [sel(123)]) == 1000
    assert completion_watermark(777, []) == 777
    assert completion_watermark(200, [sel(123), sel(456)]) == 456


def test_every_stem_vector_including_unit_only_ones() -> None:
    from memconform.resources import fixture_json

    for case in fixture_json("phase2", "stems.json")["cases"]:
        expected = case.get("stem") or f"2026-06-01T12-00-00-{case['hash']}{case['suffix']}"
        assert summary_stem(case["thread_id"], 1_780_315_200, case["slug"]) == expected, case["id"]


def test_baselines_share_one_git_init_and_leave_no_scratch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each root gets its own `.git` from the one `git init` of the process, whose scratch
    folder is gone at once (a forked run ending with os._exit leaves nothing behind)."""
    import subprocess
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(workspace, "_skeleton", [])
    roots = [tmp_path / "a", tmp_path / "b"]
    for number, root in enumerate(roots):
        root.mkdir()
        (root / "f.md").write_text(f"{number}\n")
        workspace.prepare(root, 1_700_000_000)
    assert list(scratch.iterdir()) == []
    for number, root in enumerate(roots):
        def git(*args: str, at: Path = root) -> str:
            return subprocess.run(["git", "-C", str(at), *args], capture_output=True,
                                  text=True, check=True).stdout
        assert git("symbolic-ref", "HEAD") == "refs/heads/main\n"
        assert git("show", "HEAD:f.md") == f"{number}\n"
        assert git("status", "--porcelain") == ""

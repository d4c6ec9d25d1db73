"""The consolidation agent's apply_patch tool: the envelope format, matching and confinement."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memref.patch import Change, PatchError, apply_patch, confined, summary


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def test_add_delete_update_and_summary(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\nold fact\nkeep\n")
    (tmp_path / "old.md").write_text("gone\n")
    changes = apply_patch(tmp_path, patch(
        "*** Add File: topics/MEMORY.md", "+line one", "+line two",
        "*** Delete File: old.md",
        "*** Update File: notes.md", "@@", " # Notes", "-old fact", "+new fact", " keep",
    ))
    assert changes == [Change("add", "topics/MEMORY.md"), Change("delete", "old.md"),
                       Change("update", "notes.md")]
    assert (tmp_path / "topics" / "MEMORY.md").read_text() == "line one\nline two\n"
    assert not (tmp_path / "old.md").exists()
    assert (tmp_path / "notes.md").read_text() == "# Notes\nnew fact\nkeep\n"
    assert summary(changes).splitlines()[1:] == ["A topics/MEMORY.md", "D old.md", "M notes.md"]
    assert summary([]) == "No files were changed.\n"


def test_envelope_whitespace_and_missing_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\ny")
    apply_patch(tmp_path, "\n  " + patch("*** Update File: a.md", " x", "-y", "+z") + "\n\n")
    assert (tmp_path / "a.md").read_text() == "x\nz\n"


def test_move_with_edits(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one\ntwo\n")
    changes = apply_patch(tmp_path, patch(
        "*** Update File: a.md", "*** Move to: archive/b.md", "@@", " one", "-two", "+2",
    ))
    assert changes == [Change("move", "archive/b.md")]
    assert not (tmp_path / "a.md").exists()
    assert (tmp_path / "archive" / "b.md").read_text() == "one\n2\n"


def test_move_without_edits(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", "*** Move to: b.md"))
    assert (tmp_path / "b.md").read_text() == "one\n"
    assert not (tmp_path / "a.md").exists()


def test_multiple_chunks_search_forward(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\na\nx\nb\nx\n")
    apply_patch(tmp_path, patch(
        "*** Update File: a.md", "@@", "-x", "+1", " a", "@@", "-x", "+2", "@@", " b", "-x", "+3",
    ))
    assert (tmp_path / "a.md").read_text() == "1\na\n2\nb\n3\n"


def test_context_header_and_pure_insertions(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("## One\n- a\n## Two\n- a\n")
    apply_patch(tmp_path, patch(
        "*** Update File: a.md", "@@ ## Two", "-- a", "+- b", "@@", "+tail",
    ))
    assert (tmp_path / "a.md").read_text() == "## One\n- a\n## Two\n- b\ntail\n"
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## One", "+- new"))
    assert (tmp_path / "a.md").read_text() == "## One\n- new\n- a\n## Two\n- b\ntail\n"


def test_context_header_may_be_repeated_as_context(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("## A\n- x\n## B\n- x\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## B", " ## B", "-- x", "+- y"))
    assert (tmp_path / "a.md").read_text() == "## A\n- x\n## B\n- y\n"


def test_binary_files_can_be_deleted_not_updated(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"\xff\xfe\n")
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe\n")
    with pytest.raises(PatchError, match=r"^Update File a\.bin: cannot read the file"):
        apply_patch(tmp_path, patch("*** Update File: a.bin", "-x"))
    apply_patch(tmp_path, patch("*** Delete File: b.bin"))
    assert sorted(os.listdir(tmp_path)) == ["a.bin"]


def test_move_onto_a_directory_names_the_destination(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\n")
    (tmp_path / "dir").mkdir()
    with pytest.raises(PatchError, match=r"^Move to dir: a directory is in the way"):
        apply_patch(tmp_path, patch("*** Update File: a.md", "*** Move to: dir"))
    assert (tmp_path / "a.md").read_text() == "a\n"


def test_empty_line_is_empty_context(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\n\nb\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", " a", "", "-b", "+c"))
    assert (tmp_path / "a.md").read_text() == "a\n\nc\n"


@pytest.mark.parametrize("old", ["keep   ", "  keep  ", "\tkeep"])
def test_whitespace_tolerant_matching(tmp_path: Path, old: str) -> None:
    (tmp_path / "a.md").write_text(f"{old}\nold\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", " keep", "-old", "+new"))
    assert (tmp_path / "a.md").read_text() == f"{old}\nnew\n"


@pytest.mark.parametrize(("before", "after"), [
    ("x \nx\n", "x \ny\n"),  # an exact match wins over an earlier tolerant one
    ("  x\nx \n", "  x\ny\n"),  # ignoring trailing whitespace wins over ignoring both
])
def test_stricter_match_wins(tmp_path: Path, before: str, after: str) -> None:
    (tmp_path / "a.md").write_text(before)
    apply_patch(tmp_path, patch("*** Update File: a.md", "-x", "+y"))
    assert (tmp_path / "a.md").read_text() == after


def test_end_of_file_matches_the_last_lines(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\nmid\nx\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@", "-x", "+end", "*** End of File"))
    assert (tmp_path / "a.md").read_text() == "x\nmid\nend\n"
    with pytest.raises(PatchError, match=r"'mid' at the end of the file"):
        apply_patch(tmp_path, patch("*** Update File: a.md", "-mid", "*** End of File"))


def test_unlocatable_chunk_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("bar\n")
    with pytest.raises(PatchError, match=r"^Update File notes\.md: could not find the lines "
                                         r"starting with 'foo'"):
        apply_patch(tmp_path, patch("*** Update File: notes.md", "-foo", "+x"))
    with pytest.raises(PatchError, match=r"could not find the line '## Nope'"):
        apply_patch(tmp_path, patch("*** Update File: notes.md", "@@ ## Nope", "-bar"))


@pytest.mark.parametrize(("rel", "message"), [
    ("", "empty or invalid path"),
    ("./", "empty or invalid path"),
    ("/etc/passwd", "refusing an absolute path: /etc/passwd"),
    ("C:/x.md", "refusing an absolute path"),
    ("../x.md", "refusing to write outside the memory root: ../x.md"),
    ("a/../b.md", "outside the memory root"),
    ("a\\..\\..\\b.md", "outside the memory root"),
    (".git/config", "refusing to write inside .git: .git/config"),
    ("sub/.GIT/hooks/x", "inside .git"),
    ("a/b/.Git", "inside .git"),
])
def test_confined_refusals(tmp_path: Path, rel: str, message: str) -> None:
    with pytest.raises(PatchError, match=re.escape(message)):
        confined(tmp_path, rel)


def test_confined_symlinks(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (root / "inner").symlink_to(root / "real")
    (root / "away").symlink_to(outside)
    (root / "file.md").symlink_to(root / "real" / "f.md")
    (root / "dangling.md").symlink_to(tmp_path / "missing.md")
    for rel in ["inner/x.md", "away/x.md", "file.md", "dangling.md"]:
        with pytest.raises(PatchError, match=f"refusing to follow a symlink: {rel}"):
            confined(root, rel)
    assert confined(root, "real//./new/x.md") == (root / "real" / "new" / "x.md").resolve()


def test_patch_refuses_symlinks_and_writes_nothing(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "x.md").write_text("secret\n")
    (root / "link").symlink_to(outside)
    with pytest.raises(PatchError, match=r"symlink: link/x\.md"):
        apply_patch(root, patch("*** Delete File: link/x.md"))
    with pytest.raises(PatchError, match=r"symlink: link/new\.md"):
        apply_patch(root, patch("*** Add File: link/new.md", "+x"))
    assert os.listdir(outside) == ["x.md"]


@pytest.mark.parametrize(("text", "message"), [
    ("", "must start with '*** Begin Patch'"),
    ("*** Add File: a.md\n+x\n*** End Patch", "must start with"),
    ("*** Begin Patch\n*** Add File: a.md\n+x\n", "must end with '*** End Patch'"),
    ("*** Begin Patch", "must end with"),
    (patch(), "no file operations"),
    (patch("*** Rename File: a.md"), "got '*** Rename File: a.md'"),
    (patch("*** Add File: ", "+x"), "'*** Add File:' without a path"),
    (patch("*** Add File: a.md", "x"), "got 'x'"),
    (patch("*** Update File: a.md"), "Update File a.md: empty change"),
    (patch("*** Update File: a.md", "@@", "*x"), "Update File a.md: unexpected line '*x'"),
    (patch("*** Delete File: a.md", "*** Move to: b.md"), "got '*** Move to: b.md'"),
])
def test_malformed_patches(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "a.md").write_text("x\n")
    with pytest.raises(PatchError, match=re.escape(message)):
        apply_patch(tmp_path, text)
    assert sorted(os.listdir(tmp_path)) == ["a.md"]


@pytest.mark.parametrize(("second", "message"), [
    ("*** Delete File: missing.md", "Delete File missing.md: not an existing file"),
    ("*** Update File: dir\n-x", "Update File dir: not an existing file"),
    ("*** Add File: dir", "Add File dir: a directory is in the way"),
    ("*** Add File: first.md/x.md", "a parent of the path is a file"),
    ("*** Add File: ../x.md", "outside the memory root"),
    ("*** Update File: a.md\n-nope", "could not find the lines starting with 'nope'"),
])
def test_all_or_nothing(tmp_path: Path, second: str, message: str) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "a.md").write_text("a\n")
    with pytest.raises(PatchError, match=re.escape(message)):
        apply_patch(tmp_path, patch("*** Add File: first.md", "+x", "*** Update File: a.md", "-a",
                                    "+b", *second.split("\n")))
    assert sorted(os.listdir(tmp_path)) == ["a.md", "dir"]
    assert (tmp_path / "a.md").read_text() == "a\n"


def test_later_operations_see_earlier_ones(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("old\n")
    apply_patch(tmp_path, patch(
        "*** Add File: b.md", "+one", "*** Update File: b.md", "-one", "+two",
        "*** Delete File: a", "*** Add File: a/c.md", "+c",
    ))
    assert (tmp_path / "b.md").read_text() == "two\n"
    assert (tmp_path / "a" / "c.md").read_text() == "c\n"
    with pytest.raises(PatchError, match=r"Update File gone\.md: not an existing file"):
        apply_patch(tmp_path, patch("*** Add File: gone.md", "+x", "*** Delete File: gone.md",
                                    "*** Update File: gone.md", "-x"))
    assert not (tmp_path / "gone.md").exists()


printable_lines = st.lists(st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))),
                           max_size=8)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=printable_lines)
def test_added_file_round_trips(tmp_path: Path, lines: list[str]) -> None:
    apply_patch(tmp_path, patch("*** Add File: r.md", *[f"+{line}" for line in lines]))
    assert (tmp_path / "r.md").read_text(encoding="utf-8").split("\n")[:-1] == lines

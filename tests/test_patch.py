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


def test_envelope_whitespace_and_missing_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\ny")
    apply_patch(tmp_path, "\n  " + patch("*** Update File: a.md", " x", "-y", "+z") + "\n\n")
    assert (tmp_path / "a.md").read_text() == "x\nz\n"


def test_move_with_edits(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one\ntwo\n")
    changes = apply_patch(tmp_path, patch(
        "*** Update File: a.md", "*** Move to: archive/b.md", "@@", " one", "-two", "+2",
    ))
    assert changes == [Change("update", "archive/b.md")]
    assert not (tmp_path / "a.md").exists()
    assert (tmp_path / "archive" / "b.md").read_text() == "one\n2\n"


def test_move_needs_a_chunk(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one\n")
    with pytest.raises(PatchError, match=r"Update File a\.md: empty change"):
        apply_patch(tmp_path, patch("*** Update File: a.md", "*** Move to: b.md"))
    assert sorted(os.listdir(tmp_path)) == ["a.md"]


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
    # a chunk of added lines only goes to the end, whatever its header names
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## One", "+- new"))
    assert (tmp_path / "a.md").read_text() == "## One\n- a\n## Two\n- b\ntail\n- new\n"
    with pytest.raises(PatchError, match="could not find the line '## Three'"):
        apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## Three", "+- x"))


def test_file_ending_in_a_blank_line_gets_additions_before_it(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\n\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@", "+b"))
    assert (tmp_path / "a.md").read_text() == "a\nb\n\n"


def test_lines_are_sought_after_the_header_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("## A\n- x\n## B\n- x\n")
    with pytest.raises(PatchError, match="could not find the lines starting with '## B'"):
        apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## B", " ## B", "-- x", "+- y"))
    assert (tmp_path / "a.md").read_text() == "## A\n- x\n## B\n- x\n"


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
        apply_patch(tmp_path, patch("*** Update File: a.md", "*** Move to: dir", "-a", "+b"))
    assert (tmp_path / "a.md").read_text() == "a\n"


def test_empty_line_is_empty_context(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\n\nb\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", " a", "", "-b", "+c"))
    assert (tmp_path / "a.md").read_text() == "a\n\nc\n"


@pytest.mark.parametrize("old", ["keep   ", "  keep  ", "\tkeep"])
def test_whitespace_tolerant_matching(tmp_path: Path, old: str) -> None:
    (tmp_path / "a.md").write_text(f"{old}\nold\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", " keep", "-old", "+new"))
    # the matched region is replaced by the patch's lines, context lines included
    assert (tmp_path / "a.md").read_text() == "keep\nnew\n"


@pytest.mark.parametrize(("in_file", "in_patch"), [
    ("a \u2014 b", "a - b"), ("1\u20132", "1-2"), ("\u2010\u2011\u2012\u2015\u2212", "-----"),
    ("\u201chi\u201d", '"hi"'), ("\u201ehi\u201f", '"hi"'), ("it\u2019s \u2018x\u2019", "it's 'x'"),
    ("\u201ax\u201b", "'x'"), ("a\u00a0b", "a b"), ("a\u2009b\u3000c\u202fd", "a b c d"),
    ("it's a - b", "it\u2019s a \u2013 b"),  # folding applies to both sides
])
def test_typographic_punctuation_is_folded(tmp_path: Path, in_file: str, in_patch: str) -> None:
    (tmp_path / "a.md").write_text(f"{in_file}\nz\n", encoding="utf-8")
    apply_patch(tmp_path, patch("*** Update File: a.md", f"-{in_patch}", "+new"))
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "new\nz\n"


@pytest.mark.parametrize(("in_file", "in_patch"), [
    ("wait\u2026", "wait..."), ("a\u2017b", "a_b"), ("\u00abx\u00bb", '"x"'), ("a\u200bb", "ab"),
    ("a\u200b b", "a b"), ("\u2032x\u2033", "'x\""),
])
def test_other_characters_are_not_folded(tmp_path: Path, in_file: str, in_patch: str) -> None:
    (tmp_path / "a.md").write_text(f"{in_file}\n", encoding="utf-8")
    with pytest.raises(PatchError, match="could not find"):
        apply_patch(tmp_path, patch("*** Update File: a.md", f"-{in_patch}", "+new"))


def test_exact_and_whitespace_matches_win_over_folding(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a \u2014 b\n  a - b\n", encoding="utf-8")
    apply_patch(tmp_path, patch("*** Update File: a.md", "-a - b", "+x"))
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "a \u2014 b\nx\n"
    (tmp_path / "a.md").write_text("## Notes \u2014 2024\n- a\n", encoding="utf-8")
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@ ## Notes - 2024", "-- a", "+- b"))
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "## Notes \u2014 2024\n- b\n"


def test_crlf_files_and_patches(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a\r\nb\r\nc\r\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", " a", "-b", "+B"))
    assert (tmp_path / "a.md").read_bytes() == b"a\nB\nc\r\n"
    apply_patch(tmp_path, "*** Begin Patch\r\n*** Update File: a.md\r\n@@\r\n+d\r\n"
                          "*** End Patch\r\n")
    assert (tmp_path / "a.md").read_bytes() == b"a\nB\nc\r\nd\n"


def test_trailing_blank_line_of_a_chunk_stands_for_the_newline(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\nb\n")
    apply_patch(tmp_path, patch("*** Update File: a.md", "@@", "-b", "+c", ""))
    assert (tmp_path / "a.md").read_text() == "a\nc\n"


def test_heredoc_wrapper_is_accepted(tmp_path: Path) -> None:
    for opener in ("<<EOF", "<<'EOF'", '<<"EOF"'):
        apply_patch(tmp_path, f"{opener}\n" + patch("*** Add File: a.md", f"+{opener}") + "EOF\n")
        assert (tmp_path / "a.md").read_text() == f"{opener}\n"
    with pytest.raises(PatchError, match="first line"):
        apply_patch(tmp_path, "<<END\n" + patch("*** Add File: a.md", "+x") + "END\n")


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
    ("", "first line of the patch must be '*** Begin Patch'"),
    ("*** Add File: a.md\n+x\n*** End Patch", "first line"),
    ("*** Begin Patch\n*** Add File: a.md\n+x\n", "last line of the patch must be '*** End Patch'"),
    ("*** Begin Patch", "last line"),
    (patch(), "no file operations"),
    (patch("*** Rename File: a.md"), "'*** Rename File: a.md' is not a file operation"),
    (patch("*** Add File: ", "+x"), "'*** Add File:' is not a file operation"),
    (patch("*** Add File: a.md", "x"), "'x' is not a file operation"),
    (patch("*** Update File: a.md"), "Update File a.md: empty change"),
    (patch("*** Update File: a.md", "@@", "*x"), "Update File a.md: unexpected line '*x'"),
    (patch("*** Update File: a.md", "@@"), "Update File a.md: a chunk without lines"),
    (patch("*** Update File: a.md", "@@", "*** End of File"), "unexpected line"),
    (patch("*** Update File: a.md", "-x", "y"), "a chunk must start with '@@', got 'y'"),
    (patch("*** Update File: a.md", "-x", "@@x"), "a chunk must start with '@@'"),
    (patch("*** Delete File: a.md", "*** Move to: b.md"), "'*** Move to: b.md' is not a file"),
    (patch("*** Delete File: a.md", "", "*** Add File: b.md", "+b"), "'' is not a file operation"),
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


def test_operations_play_in_order_on_files_that_exist_on_disk(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("old\n")
    (tmp_path / "b.md").write_text("one\ntwo\n")
    apply_patch(tmp_path, patch(
        "*** Update File: b.md", "-one", "+1", "*** Update File: b.md", "-two", "+2",
        "*** Delete File: a", "*** Add File: a/c.md", "+c",
    ))
    assert (tmp_path / "b.md").read_text() == "1\n2\n"
    assert (tmp_path / "a" / "c.md").read_text() == "c\n"
    # an update or delete must find its file on disk, not only earlier in the same patch
    for second in ("*** Update File: new.md\n-x\n+y", "*** Delete File: new.md"):
        with pytest.raises(PatchError, match=r"File new\.md: not an existing file"):
            apply_patch(tmp_path, patch("*** Add File: new.md", "+x", *second.split("\n")))
        assert not (tmp_path / "new.md").exists()
    with pytest.raises(PatchError, match=r"Delete File b\.md: not an existing file"):
        apply_patch(tmp_path, patch("*** Delete File: b.md", "*** Delete File: b.md"))
    assert (tmp_path / "b.md").read_text() == "1\n2\n"


printable_lines = st.lists(st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))),
                           max_size=8)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=printable_lines)
def test_added_file_round_trips(tmp_path: Path, lines: list[str]) -> None:
    apply_patch(tmp_path, patch("*** Add File: r.md", *[f"+{line}" for line in lines]))
    assert (tmp_path / "r.md").read_text(encoding="utf-8").split("\n")[:-1] == lines

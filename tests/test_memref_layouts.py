"""memref's memory layouts: which one a release runs, the v2 parsing and validation, and the
byte-bounded cutting the v2 layout uses (facts observed on Codex 0.155.0 and 0.171.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memref import releases
from memref.config import ConfigError, load_config, parse_config
from memref.phase2 import artifacts_problem
from memref.stage1_output import OutputError, parse_v2
from memref.truncate import split_bytes, truncate_middle_bytes

R144, R155, R171 = (releases.get(v) for v in ("0.144.6", "0.155.0", "0.171.0"))


def _layouts(release: releases.Release, memories: dict[str, object],
             home: Path | None = None) -> tuple[str, tuple[str, ...]]:
    config = parse_config({"memories": memories}, release=release, home=home)
    return config.layout.name, tuple(layout.name for layout in config.write_layouts)


@pytest.mark.parametrize(("release", "memories", "expected"), [
    (R144, {"version": "v2", "dual_write": True}, ("v1", ("v1",))),  # keys unknown there
    (R155, {}, ("v1", ("v1",))),
    (R155, {"version": "v2"}, ("v2", ("v2",))),
    (R155, {"dual_write": True}, ("v1", ("v1", "v2"))),
    (R155, {"version": "v2", "dual_write": True}, ("v2", ("v1", "v2"))),
    (R171, {}, ("v2", ("v2",))),
    (R171, {"version": "v1"}, ("v1", ("v1",))),
    (R171, {"version": "v1", "dual_write": True}, ("v1", ("v1", "v2"))),
    (R171, {"dual_write": True}, ("v2", ("v2",))),
])
def test_layouts_per_release(release: releases.Release, memories: dict[str, object],
                             expected: tuple[str, tuple[str, ...]]) -> None:
    assert _layouts(release, memories) == expected


def test_an_existing_v1_folder_keeps_0171_on_v1_unless_v2_is_named(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    assert _layouts(R171, {}, tmp_path) == ("v1", ("v1",))
    assert _layouts(R171, {"version": "v2"}, tmp_path) == ("v2", ("v2",))
    assert _layouts(R155, {}, tmp_path) == ("v1", ("v1",))
    (tmp_path / "memories").rmdir()
    (tmp_path / "memories_1.sqlite").touch()  # the DB alone does not keep v1
    assert _layouts(R171, {}, tmp_path) == ("v2", ("v2",))


def test_a_pinned_layout_yields_to_the_home_config(tmp_path: Path) -> None:
    assert load_config(tmp_path, R171, pin_version="v1").layout.name == "v1"
    (tmp_path / "config.toml").write_text('[memories]\nversion = "v2"\n', encoding="utf-8")
    assert load_config(tmp_path, R171, pin_version="v1").layout.name == "v2"
    assert load_config(tmp_path, R144, pin_version="v1").layout.name == "v1"


@pytest.mark.parametrize(("memories", "key"), [
    ({"version": "v3"}, "memories.version"), ({"version": 2}, "memories.version"),
    ({"version": "V1"}, "memories.version"), ({"dual_write": "yes"}, "memories.dual_write"),
])
def test_bad_layout_keys_are_refused(memories: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        parse_config({"memories": memories}, release=R155)
    parse_config({"memories": memories}, release=R144)  # unknown keys there: ignored


def test_service_tier_is_a_key_of_0171_only() -> None:
    table = {"memories": {"consolidation_service_tier": "flex"}}
    assert parse_config(table, release=R171).memories.consolidation_service_tier == "flex"
    assert parse_config(table, release=R155).memories.consolidation_service_tier is None


@pytest.mark.parametrize(("text", "message"), [
    ('{"rollout_summary": "s", "rollout_slug": null}', "rollout_slug"),
    ('{"rollout_summary": "s"}', "missing field `rollout_slug`"),
    ('{"rollout_summary": "s", "rollout_slug": "x", "raw_memory": "m"}',
     "unknown field `raw_memory`"),
    ('["s", "x"]', "JSON object"),
])
def test_v2_answers_that_fail(text: str, message: str) -> None:
    with pytest.raises(OutputError, match=message):
        parse_v2(text)


def test_v2_answer_keeps_an_empty_slug_and_caps_the_summary() -> None:
    parsed = parse_v2('{"rollout_summary": "%s", "rollout_slug": ""}' % ("é" * 6_000))
    assert (parsed.raw_memory, parsed.rollout_slug) == ("", "")
    assert parsed.rollout_summary == "é" * 2_250 + "\u20261500 chars truncated\u2026" + "é" * 2_250


def test_split_bytes_keeps_characters_whole_and_fills_each_piece() -> None:
    text = "User correction: 🐈\n" * 2_000
    pieces = split_bytes(text, 8_900)
    assert "".join(pieces) == text
    sizes = [len(p.encode()) for p in pieces]
    assert max(sizes) <= 8_900 and min(sizes[:-1]) > 8_896
    assert split_bytes("", 10) == [] and split_bytes("abc", 10) == ["abc"]


def test_truncate_middle_bytes_counts_the_characters_removed() -> None:
    assert truncate_middle_bytes("abcdef", 6) == "abcdef"
    assert truncate_middle_bytes("abcdefg", 6) == "abc\u20261 chars truncated\u2026efg"
    # a cut inside a character drops it: head "" (1 byte of "é"), tail "é" (2 bytes)
    assert truncate_middle_bytes("ééé", 3) == "\u20262 chars truncated\u2026é"


def _summary(root: Path, text: str | bytes, memory_md: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    (root / "memory_summary.md").write_bytes(data)
    if memory_md:
        (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    return root


HEADINGS = "## User Profile\n## User preferences\n## General Tips\n## What's in Memory\n"


@pytest.mark.parametrize(("text", "valid"), [
    ("v1\n" + HEADINGS, True),
    ("v1\r\n" + HEADINGS.replace("\n", "\r\n"), True),
    ("v1\n" + "".join(reversed(HEADINGS.splitlines(keepends=True))), True),
    ("v1 \n" + HEADINGS, False),
    ("v1\n" + HEADINGS.replace("## General Tips\n", ""), False),
    ("v1\n" + HEADINGS.lower(), False),
    ("v1\n" + HEADINGS + "x" * (10_000 - len("v1\n" + HEADINGS) - 1) + "\n", False),
    ("v1\n" + HEADINGS + "x" * (9_999 - len("v1\n" + HEADINGS) - 1) + "\n", True),
])
def test_v2_artifacts(tmp_path: Path, text: str, valid: bool) -> None:
    root = _summary(tmp_path / "memories_v2", text)
    assert (artifacts_problem(root, "v2") is None) is valid
    assert artifacts_problem(root, "v1") == "MEMORY.md is missing"


@pytest.mark.parametrize("version", list(releases.RELEASES))
def test_memref_reads_the_keys_each_release_has(version: str) -> None:
    """The `[memories]` keys memref reads for a release are those observed on its binary."""
    from memconform.codex import releases as harness
    from memref.config import ALIASES, _release_keys

    observed = harness.get(version).memories_keys
    assert _release_keys(releases.get(version)) | set(ALIASES) == observed

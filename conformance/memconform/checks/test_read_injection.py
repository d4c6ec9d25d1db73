"""READ-INJ, TRUNC: the memory fragment in a new turn's developer instructions
(fixtures/read/injection.json, through `turn.instructions`)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.registry import check
from memconform.resources import fixture_json
from memconform.verdicts import fail

CASES = fixture_json("read", "injection.json")["cases"]
BEGINS = "========= MEMORY_SUMMARY BEGINS ========="
ENDS = "========= MEMORY_SUMMARY ENDS ========="


def text_of(spec: dict[str, Any]) -> str:
    return "".join(part * count for part, count in spec["parts"])


def write_summary(home: CodexHome, spec: dict[str, Any]) -> None:
    path = home.memory_root / "memory_summary.md"
    home.memory_root.mkdir(parents=True, exist_ok=True)
    if spec.get("missing"):
        return
    if spec.get("directory"):
        path.mkdir()
    elif "hex" in spec:
        path.write_bytes(bytes.fromhex(spec["hex"]))
    else:
        path.write_bytes(text_of(spec).encode("utf-8"))


def assert_control_injects(impl: Adapter, home: CodexHome) -> None:
    """Control: with the feature on and a plain summary, the same home gets its fragment, so
    the case's "no fragment" was the case's doing."""
    path = home.memory_root / "memory_summary.md"
    if path.is_dir():
        path.rmdir()
    home.write_config(feature=True)
    path.write_text("Control summary.\n", encoding="utf-8")
    fragments = impl.call("turn.instructions", {"home": str(home.path)})["developer_fragments"]
    assert len(fragments) >= 1 if home.layout == "v2" else len(fragments) == 1, \
        "with the memories feature on and a plain memory_summary.md " \
        "(control), a new turn does not get one memory fragment either, so getting none " \
        "in the case proves nothing"


@check("read.inj.summary", title="a new turn gets exactly one memory fragment holding the "
       "trimmed, head-and-tail truncated summary, or none", rules=(
           "READ-INJ-01", "READ-INJ-02", "READ-INJ-03", "TRUNC-01"),
       level="SHOULD", area="read", needs=("turn.instructions",))
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_summary(impl: Adapter, home: CodexHome, case: dict[str, Any]) -> None:
    config = case.get("config", {})
    home.write_config(feature=config.get("feature", True), memories=config.get("memories"))
    write_summary(home, case["file"])
    fragments = impl.call("turn.instructions", {"home": str(home.path)})["developer_fragments"]
    if case["summary"] is None:
        assert len(fragments) == 0, "a new turn got a memory fragment where it must get none"
        assert_control_injects(impl, home)
        return
    if home.layout == "v2":  # the instructions come in pieces (READ-V2-01)
        assert fragments, "a new turn got no memory fragment"
        fragment = "".join(fragments)
    else:
        assert len(fragments) == 1, "a new turn does not get exactly one memory fragment"
        [fragment] = fragments
    assert fragment.count(BEGINS) == 1, \
        f"the memory fragment does not hold the line {BEGINS} exactly once"
    assert fragment.count(ENDS) == 1, \
        f"the memory fragment does not hold the line {ENDS} exactly once"
    parts = fragment.split(BEGINS + "\n", 1)
    if len(parts) != 2 or ("\n" + ENDS) not in parts[1]:
        fail(f"the memory fragment has no summary between a {BEGINS} line and a {ENDS} line")
    inner = parts[1].rsplit("\n" + ENDS, 1)[0]
    assert inner == text_of(case["summary"]), "the summary inside the memory fragment is not " \
        "memory_summary.md trimmed and head-and-tail truncated"
    root = str(home.memory_root.absolute())
    if home.layout == "v2":
        assert f"{root}/" in fragment, "the memory instructions do not name the memory root"
    else:
        assert f"{root}/memory_summary.md" in fragment, \
            "the memory fragment's layout does not name memory_summary.md in the memory root"


V2_SUMMARY = ("v1\n## User Profile\n- The user writes Rust.\n## User preferences\n- tabs\n"
              "## General Tips\n- run tox\n## What's in Memory\n"
              + "- café naïve 🐈 résumé notes of an earlier session\n" * 160)


@check("read.v2.pieces", title="layout v2: the memory instructions come in pieces of at most "
       "8,900 bytes, each filled up to it, that join into one text holding the summary",
       rules=("READ-V2-01",), level="SHOULD", area="read", needs=("turn.instructions",),
       codex_since="0.155.0", layout="v2")
def test_v2_pieces(impl: Adapter, home: CodexHome) -> None:
    home.write_config(feature=True)
    home.memory_root.mkdir(parents=True, exist_ok=True)
    (home.memory_root / "memory_summary.md").write_text(V2_SUMMARY, encoding="utf-8")
    fragments = impl.call("turn.instructions", {"home": str(home.path)})["developer_fragments"]
    sizes = [len(f.encode("utf-8")) for f in fragments]
    assert len(fragments) >= 2, "memory instructions of more than 8,900 bytes did not come " \
        f"in several pieces (sizes: {sizes})"
    assert max(sizes) <= 8_900, f"a piece of the memory instructions is longer than 8,900 " \
        f"bytes (sizes: {sizes})"
    assert min(sizes[:-1]) > 8_900 - 4, "a piece other than the last is not filled up to " \
        f"8,900 bytes (less the rest of a character) (sizes: {sizes})"
    joined = "".join(fragments)
    inner = joined.split(BEGINS + "\n", 1)[-1].rsplit("\n" + ENDS, 1)[0]
    assert joined.count(BEGINS) == 1 and joined.count(ENDS) == 1 \
        and inner == V2_SUMMARY.strip(), "the pieces joined do not hold the summary, trimmed, " \
        f"between a {BEGINS} line and a {ENDS} line"


@check("read.v2.own-root", title="layout v2: a memory_summary.md in the v1 folder (memories/) "
       "is not read", rules=("READ-V2-01",), level="SHOULD", area="read",
       needs=("turn.instructions",), codex_since="0.155.0", layout="v2")
def test_v2_own_root(impl: Adapter, home: CodexHome) -> None:
    home.write_config(feature=True)
    v1_root = home.path / "memories"
    v1_root.mkdir(parents=True, exist_ok=True)
    (v1_root / "memory_summary.md").write_text(V2_SUMMARY, encoding="utf-8")
    fragments = impl.call("turn.instructions", {"home": str(home.path)})["developer_fragments"]
    assert fragments == [], "a session of layout v2 got memory instructions from the v1 " \
        "folder memories/"
    home.memory_root.mkdir(parents=True, exist_ok=True)
    (home.memory_root / "memory_summary.md").write_text(V2_SUMMARY, encoding="utf-8")
    fragments = impl.call("turn.instructions", {"home": str(home.path)})["developer_fragments"]
    assert fragments, "with the summary in its own folder too (control), the session got no " \
        "memory instructions either, so getting none proves nothing"

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
    assert len(fragments) == 1, "with the memories feature on and a plain memory_summary.md " \
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
    assert f"{root}/memory_summary.md" in fragment, \
        "the memory fragment's layout does not name memory_summary.md in the memory root"

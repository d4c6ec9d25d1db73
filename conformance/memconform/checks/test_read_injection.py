"""READ-INJ, TRUNC: the memory fragment in a new turn's developer instructions
(fixtures/read/injection.json, through `turn.instructions`)."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.home import CodexHome
from memconform.registry import check
from memconform.resources import fixture_json

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
        assert fragments == [], "a memory fragment was injected"
        return
    assert len(fragments) == 1, f"{len(fragments)} memory fragments"
    [fragment] = fragments
    assert fragment.count(BEGINS) == 1 and fragment.count(ENDS) == 1
    inner = fragment.split(BEGINS + "\n", 1)[1].rsplit("\n" + ENDS, 1)[0]
    assert inner == text_of(case["summary"]), "the injected summary differs"
    root = str(home.memory_root.absolute())
    assert f"{root}/memory_summary.md" in fragment, "the layout does not name the memory root"

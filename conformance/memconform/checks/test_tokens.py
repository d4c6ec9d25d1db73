"""TOK: Codex's four-bytes-per-token estimate, through the optional `tokens.approx` operation."""

from __future__ import annotations

from typing import Any

import pytest

from memconform.adapters import Adapter
from memconform.registry import check
from memconform.resources import fixture_json

CASES = fixture_json("tokens", "approx.json")["cases"]


def _text(case: dict[str, Any]) -> str:
    if "text_repeat" in case:
        return str(case["text_repeat"]["unit"]) * int(case["text_repeat"]["count"])
    return str(case["text"])


@check("tokens.approx", title="token estimate is the UTF-8 length over four, rounded up",
       rules="TOK-01", level="SHOULD", area="tokens", needs=("tokens.approx",))
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_approx(impl: Adapter, case: dict[str, Any]) -> None:
    assert impl.call("tokens.approx", {"text": _text(case)})["tokens"] == case["tokens"], \
        "the estimate is not the text's UTF-8 byte length divided by four, rounded up"

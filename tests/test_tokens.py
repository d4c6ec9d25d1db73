"""Token counting: the byte rule."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from memref import tokens


@given(st.text())
def test_byte_rule_is_ceiling_of_utf8_length_over_four(text: str) -> None:
    assert tokens.approx_token_count(text) == math.ceil(len(text.encode("utf-8")) / 4)

"""Token counting works offline: the byte rule, and o200k_base from the bpe-openai wheel."""

from __future__ import annotations

import math
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memref import tokens


@given(st.text())
def test_byte_rule_is_ceiling_of_utf8_length_over_four(text: str) -> None:
    assert tokens.approx_token_count(text) == math.ceil(len(text.encode("utf-8")) / 4)


def test_o200k_loads_without_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    tokens.encoding.cache_clear()
    try:
        assert tokens.o200k_token_count("hello world") == 2
        assert tokens.o200k_token_count("") == 0
        assert len(list((tmp_path / "cache").iterdir())) == 1
    finally:
        tokens.encoding.cache_clear()


def test_unknown_encoding_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        tokens.install_offline_encoding("p50k_base")

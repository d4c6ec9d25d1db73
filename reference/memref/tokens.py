"""Token counting: Codex's byte rule (TOK-01) and real `o200k_base` counts, fully offline.

tiktoken fetches encodings over the network by default. The `bpe-openai` wheel ships the same
files gzipped; they are unpacked into a cache directory named the way tiktoken expects (the
SHA-1 of the encoding URL) and tiktoken verifies their SHA-256 when it loads them.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

BYTES_PER_TOKEN = 4
_ENCODING_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def approx_token_count(text: str) -> int:
    """Codex's estimate: UTF-8 length divided by four, rounded up."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "memconform" / "tiktoken"
    return path


def install_offline_encoding(name: str) -> Path:
    """Place encoding `name` from the bpe-openai wheel into the tiktoken cache; return the dir."""
    if name not in _ENCODING_URLS:
        raise ValueError(f"unknown encoding {name!r}; known: {sorted(_ENCODING_URLS)}")
    cache_dir = _cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(_ENCODING_URLS[name].encode()).hexdigest()
    if not target.exists():
        packed = resources.files("bpe_openai").joinpath("data", f"{name}.tiktoken.gz")
        data = gzip.decompress(packed.read_bytes())
        fd, tmp = tempfile.mkstemp(dir=cache_dir)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)  # atomic: concurrent workers never see a partial file
    return cache_dir


@cache
def encoding(name: str = "o200k_base") -> Any:
    os.environ["TIKTOKEN_CACHE_DIR"] = str(install_offline_encoding(name))
    import tiktoken

    return tiktoken.get_encoding(name)


def o200k_token_count(text: str) -> int:
    """Exact token count under `o200k_base`."""
    return len(encoding("o200k_base").encode(text, disallowed_special=()))

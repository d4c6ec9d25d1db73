"""Installing a Codex release with npm: retried, and a failure says what npm said."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.codex import binary, releases

FAKE_NPM = """#!/bin/sh
# fails while the counter file is short of {fails} lines, then installs a stub binary
count="{counter}"
echo x >> "$count"
if [ "$(wc -l < "$count")" -le {fails} ]; then
    echo "npm ERR! network ECONNRESET while fetching $7" >&2
    exit 1
fi
prefix="$6"
mkdir -p "$prefix/{vendored_dir}"
printf '#!/bin/sh\\necho codex-cli 0.171.0\\n' > "$prefix/{vendored}"
chmod +x "$prefix/{vendored}"
"""


def _fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: int) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    counter = tmp_path / "calls"
    script = bindir / "npm"
    script.write_text(FAKE_NPM.format(fails=fails, counter=counter,
                                      vendored_dir=binary.VENDORED.parent,
                                      vendored=binary.VENDORED), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setattr(binary, "INSTALL_BACKOFF_S", 0.0)
    return counter


def test_a_dropped_download_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _fake_npm(tmp_path, monkeypatch, fails=binary.INSTALL_ATTEMPTS - 1)
    path = binary.install(releases.get("0.171.0"), tmp_path / "prefix")
    assert path == tmp_path / "prefix" / binary.VENDORED and path.is_file()
    assert len(counter.read_text().splitlines()) == binary.INSTALL_ATTEMPTS


def test_a_failed_install_names_every_attempt_and_what_npm_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_npm(tmp_path, monkeypatch, fails=binary.INSTALL_ATTEMPTS)
    with pytest.raises(binary.CodexBinaryError) as caught:
        binary.install(releases.get("0.171.0"), tmp_path / "prefix")
    message = str(caught.value)
    assert "@openai/codex@0.171.0" in message
    assert message.count("ECONNRESET") == binary.INSTALL_ATTEMPTS
    assert f"attempt {binary.INSTALL_ATTEMPTS}: exit 1" in message

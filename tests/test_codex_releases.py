"""The release files: each one loads, and its facts agree with the schema dumps beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli
from memconform import resources
from memconform.codex import releases
from memconform.codex.releases import ReleaseError
from memconform.expectations import Expectations


def test_known_releases_oldest_first() -> None:
    assert list(releases.known()) == ["0.144.6", "0.155.0", "0.171.0"]
    assert releases.get(releases.DEFAULT).driven == "full"


@pytest.mark.parametrize("version", ["0.144.6", "0.155.0", "0.171.0"])
def test_migration_counts_match_the_dumps(version: str) -> None:
    release = releases.get(version)
    for db, migrations in release.databases.items():
        sql = resources.fixture(f"codex-{version}", f"{db}.sql").read_text(encoding="utf-8")
        assert sql.startswith(f"-- On-disk schema of {db}.sqlite as created by Codex CLI "
                              f"{version} ")
        rows = re.findall(r"INSERT INTO _sqlx_migrations\S* VALUES\((\d+),", sql)
        assert [int(r) for r in rows] == list(range(1, migrations + 1)), db


def test_expectations_named_by_a_release_exist() -> None:
    named = [name for r in releases.known().values() for layout in r.layouts
             if (name := r.expectations_for(layout))]
    assert any(name.endswith("-v2.toml") for name in named)
    for name in named:
        assert resources.doc(name).is_file()
        Expectations.load(resources.doc(name))


@pytest.mark.parametrize(("edit", "problem"), [
    (('version = "0.155.0"', 'version = "0.155.1"'), "is not the folder's '0.155.0'"),
    (('default_layout = "v1"', 'default_layout = "v3"'), "are not among ['v1', 'v2']"),
    (('driven = "full"', 'driven = "yes"'), "driven 'yes' is not one of"),
    (('stage1_model = "gpt-5.6-luna"\n', ''), "KeyError: 'stage1_model'"),
    (('layouts = ["v1", "v2"]', 'layouts = ["v1", "v2"'), "TOMLDecodeError"),
    (('off_features = ["shell_snapshot", "plugins"]', 'off_features = ["plugins=true"]'),
     "off_features ['plugins=true'] are not all feature names"),
    (('off_features = ["shell_snapshot", "plugins"]', 'off_features = [1]'),
     "off_features [1] are not all feature names"),
    (('off_features = ["shell_snapshot", "plugins"]', 'off_features = "plugins"'),
     "off_features is 'plugins', not an array"),
])
def test_bad_release_files_are_refused(edit: tuple[str, str], problem: str) -> None:
    text = resources.fixture("codex-0.155.0", "release.toml").read_text(encoding="utf-8")
    assert edit[0] in text
    with pytest.raises(ReleaseError, match=re.escape(problem)) as caught:
        releases._load("0.155.0", text.replace(*edit))
    assert "fixtures/codex-0.155.0/release.toml" in str(caught.value)


def test_ref_follows_the_release_it_is_given() -> None:
    from memconform.adapters import ImplSpecError, resolve

    shake = resolve("ref@0.155.0", timeout_s=30).handshake
    assert shake.follows == ("0.155.0", "v1")
    assert resolve("ref", timeout_s=30).handshake.follows == ("0.144.6", "v1")
    assert resolve("ref@0.171.0/v2", timeout_s=30).handshake.follows == ("0.171.0", "v2")
    with pytest.raises(ImplSpecError, match=r"memref implements Codex 0\.144\.6, 0\.155\.0, "
                                            r"0\.171\.0, not '0\.180\.0'"):
        resolve("ref@0.180.0", timeout_s=30)
    with pytest.raises(ImplSpecError, match=r"Codex 0\.144\.6 has no memory layout 'v2'"):
        resolve("ref@0.144.6/v2", timeout_s=30)


def test_release_gate() -> None:
    from memconform.scope import release_gate

    assert release_gate(None, ("0.144.6", "v1")) is None
    assert release_gate("0.155.0", ("0.155.0", "v1")) is None
    assert release_gate("0.155.0", ("0.171.0", "v1")) is None
    assert release_gate("0.155.0", ("0.144.6", "v1")) == (
        "the rule applies from Codex 0.155.0 on; the implementation follows Codex 0.144.6")


def test_run_refuses_an_unknown_codex_release(tmp_path: Path) -> None:
    result = run_cli("run", "--impl", "codex@0.150.0", "--report-dir", str(tmp_path / "r"),
                     cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Codex 0.150.0 is not a release memconform knows (known: 0.144.6, 0.155.0, " \
           "0.171.0)" in result.stderr
    assert not (tmp_path / "r").exists(), "a report was started for an unknown release"

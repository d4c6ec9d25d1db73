"""The home a failing check's bundle describes: captured as it was, dumped only when written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memconform.bundles import capture_home, describe_home
from memconform.rendering import Normalizer

PLAIN = Normalizer()  # no directory to replace


def _wal_db(path: Path, value: str) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (v TEXT)")
    con.execute("INSERT INTO t VALUES (?)", (value,))
    con.commit()
    con.close()


def test_capture_keeps_the_rows_of_its_moment(tmp_path: Path) -> None:
    _wal_db(tmp_path / "state_5.sqlite", "before")
    (tmp_path / "notes.md").write_text("x\n", encoding="utf-8")
    state = capture_home(tmp_path)
    con = sqlite3.connect(tmp_path / "state_5.sqlite")
    con.execute("UPDATE t SET v = 'after'")
    con.commit()
    con.close()
    text = state.render(PLAIN)
    assert "INSERT INTO \"t\" VALUES('before');" in text
    assert "after" not in text
    assert "file notes.md 2 " in text
    assert "'after'" in describe_home(tmp_path, PLAIN)


def test_rows_still_in_the_wal_are_dumped(tmp_path: Path) -> None:
    db = tmp_path / "memories_1.sqlite"
    _wal_db(db, "first")
    keeper = sqlite3.connect(db)  # an open reader keeps the WAL from being checkpointed away
    keeper.execute("PRAGMA wal_autocheckpoint=0")
    keeper.execute("INSERT INTO t VALUES ('in-wal')")
    keeper.commit()
    try:
        assert (tmp_path / "memories_1.sqlite-wal").stat().st_size > 0
        assert "'in-wal'" in capture_home(tmp_path).render(PLAIN)
    finally:
        keeper.close()


def test_a_missing_home_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert capture_home(missing).render(Normalizer([(str(missing), "<HOME>")])) == \
        "<HOME>: does not exist\n"

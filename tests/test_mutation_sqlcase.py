"""The classes proved from the code: sql-letter-case only where SQLite cannot tell the two
statements apart, row-key-letter-case only for column names read from a fetched sqlite3.Row."""

from __future__ import annotations

import sqlite3

import pytest

from memconform.mutation import results, sqlcase
from memconform.mutation.triage import Equivalent

SOURCE = '''\
def finish(con, key, now):
    con.execute(
        "UPDATE jobs SET status = 'done', finished_at = :now"
        " WHERE job_key = ?", {"now": now})
    name = "memory_summary.md"
    owner = "ownership_token = ?"
    con.execute(f"SELECT 1 FROM jobs WHERE {owner}", (key,))
'''


def diff(old: str, new: str) -> str:
    return f"--- src/memref/m.py\n+++ src/memref/m.py\n@@ -1,3 +1,3 @@\n-{old}\n+{new}\n"


LINE = '''        "UPDATE jobs SET status = 'done', finished_at = :now"'''
WHERE = '''        " WHERE job_key = ?", {"now": now})'''


@pytest.mark.parametrize(("old", "new"), [
    (LINE, LINE.replace("UPDATE jobs SET", "update JOBS set")),
    (LINE, LINE.replace("finished_at", "FINISHED_AT")),
    (WHERE, WHERE.replace("WHERE job_key", "where JOB_KEY")),
], ids=["keywords-and-table", "column", "continuation-line"])
def test_case_of_sql_words_in_an_executed_statement_is_equivalent(old: str, new: str) -> None:
    assert sqlcase.is_sql_letter_case(diff(old, new), SOURCE)


@pytest.mark.parametrize(("old", "new"), [
    (LINE, LINE.replace("'done'", "'DONE'")),
    (LINE, LINE.replace(":now", ":NOW")),
    (WHERE, WHERE.replace('"now"', '"NOW"')),
    ('    name = "memory_summary.md"', '    name = "MEMORY_SUMMARY.MD"'),
    ('    owner = "ownership_token = ?"', '    owner = "OWNERSHIP_TOKEN = ?"'),
    (LINE, LINE.replace("UPDATE jobs", "XXUPDATE jobs")),
    ('    con.execute(f"SELECT 1 FROM jobs WHERE {owner}", (key,))',
     '    con.execute(f"select 1 from jobs where {owner}", (key,))'),
], ids=["quoted-literal", "named-parameter", "parameter-dict-key", "not-sql",
        "sql-outside-the-call", "not-only-case", "f-string"])
def test_anything_else_is_not(old: str, new: str) -> None:
    assert not sqlcase.is_sql_letter_case(diff(old, new), SOURCE)


def test_a_line_the_source_does_not_hold_is_not_proved() -> None:
    old = '''        "UPDATE other SET x = 1"'''
    assert not sqlcase.is_sql_letter_case(diff(old, old.lower()), SOURCE)


def test_the_class_agrees_with_sqlite_on_the_words_it_admits() -> None:
    """What the class admits as equivalent, SQLite compiles to the same program; what it
    refuses (a quoted literal's case) SQLite does not."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE jobs (job_key TEXT, status TEXT, finished_at INTEGER)")

    def program(sql: str) -> list[tuple[object, ...]]:
        return con.execute("EXPLAIN " + sql, {"now": 1}).fetchall()

    sql = "UPDATE jobs SET status = 'done', finished_at = :now WHERE job_key = 'k'"
    assert program(sql) == program(sql.replace("UPDATE jobs SET", "update JOBS set")
                                   .replace("finished_at", "FINISHED_AT"))
    assert program(sql) != program(sql.replace("'done'", "'DONE'"))


def test_judge_marks_a_proved_survivor_equivalent_and_leaves_the_rest() -> None:
    proved = results.Mutant("memref.m.x_finish__mutmut_1", "memref.m", results.SURVIVED)
    other = results.Mutant("memref.m.x_finish__mutmut_2", "memref.m", results.SURVIVED)
    killed = results.Mutant("memref.m.x_finish__mutmut_3", "memref.m", results.KILLED)
    diffs = {proved.id: diff(LINE, LINE.replace("UPDATE jobs SET", "update jobs set")),
             other.id: diff(LINE, LINE.replace("'done'", "'DONE'"))}
    verdict = results.judge([proved, other, killed], {}, diffs,
                            lambda module: SOURCE if module == "memref.m" else None)
    assert proved.status == results.EQUIVALENT and proved.reason == sqlcase.REASON
    assert other.status == results.SURVIVED and verdict.untriaged == [other]
    assert "Proved equivalent by class: 1 sql-letter-case" in \
        results.markdown(verdict, {"date": "d", "mutmut": "3", "scope": "local", "areas": [],
                                   "workers": 1, "seconds": 1.0, "budget_spent": False})


def test_a_listed_entry_wins_over_the_class() -> None:
    mutant = results.Mutant("memref.m.x_finish__mutmut_1", "memref.m", results.SURVIVED)
    text = diff(LINE, LINE.replace("UPDATE", "update"))
    entry = Equivalent(mutant.id, "listed by hand", text.strip("\n"))
    results.judge([mutant], {mutant.id: entry}, {mutant.id: text}, lambda module: SOURCE)
    assert mutant.reason == "listed by hand"


ROWS = '''\
import sqlite3


def claim(con, key):
    row = con.execute("SELECT * FROM jobs WHERE job_key = ?", (key,)).fetchone()
    if row["retry_at"] is not None:
        return row["status"]
    for other in con.execute("SELECT * FROM jobs").fetchall():
        print(other["job_key"])
    data = {"retry_at": 1}
    return data["retry_at"]


def live(row: sqlite3.Row, now: int) -> bool:
    return row["lease_until"] > now
'''
RETRY = '''    if row["retry_at"] is not None:'''


@pytest.mark.parametrize(("old", "new"), [
    (RETRY, RETRY.replace('"retry_at"', '"RETRY_AT"')),
    ("        print(other[\"job_key\"])", "        print(other[\"JOB_KEY\"])"),
    ("    return row[\"lease_until\"] > now", "    return row[\"LEASE_UNTIL\"] > now"),
], ids=["fetchone", "fetchall-loop", "typed-parameter"])
def test_case_of_a_column_read_from_a_fetched_row_is_equivalent(old: str, new: str) -> None:
    assert sqlcase.is_row_key_letter_case(diff(old, new), ROWS)
    assert sqlcase.reason_for(diff(old, new), ROWS) == sqlcase.ROW_REASON


@pytest.mark.parametrize(("old", "new"), [
    ("    return data[\"retry_at\"]", "    return data[\"RETRY_AT\"]"),
    (RETRY, RETRY.replace("is not None", "IS NOT NONE")),
    (RETRY, RETRY.replace('"retry_at"', '"XXretry_atXX"')),
], ids=["a-dict", "outside-the-key", "not-only-case"])
def test_other_keys_are_not(old: str, new: str) -> None:
    assert not sqlcase.is_row_key_letter_case(diff(old, new), ROWS)


def test_sqlite_rows_read_column_names_in_any_case() -> None:
    con = sqlite3.connect(":memory:")
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT 1 AS retry_at").fetchone()
    assert row["RETRY_AT"] == row["retry_at"] == 1


LOGS = '''\
import logging

log = logging.getLogger(__name__)


def remove(entry, exc):
    log.warning("could not remove %s: %s", entry, exc)
    log.info(
        "removed %s",
        entry)
    print("could not remove %s" % entry)
'''
WARN = '''    log.warning("could not remove %s: %s", entry, exc)'''


@pytest.mark.parametrize(("old", "new"), [
    (WARN, WARN.replace('"could not remove %s: %s", ', "None, ")),
    (WARN, WARN.replace(", exc)", ")")),
    (WARN, WARN.replace("could not", "XXcould not")),
    ('        "removed %s",', '        "REMOVED %S",'),
], ids=["message-none", "argument-dropped", "marker", "second-line-of-a-call"])
def test_a_change_inside_a_logger_call_is_equivalent(old: str, new: str) -> None:
    assert sqlcase.is_log_only(diff(old, new), LOGS)
    assert sqlcase.reason_for(diff(old, new), LOGS) == sqlcase.LOG_REASON


@pytest.mark.parametrize(("old", "new"), [
    (WARN, WARN.replace("log.warning", "log.info")),
    ('    print("could not remove %s" % entry)', '    print("XXcould not remove %s" % entry)'),
], ids=["the-call-itself", "not-a-logger"])
def test_changes_outside_a_logger_call_are_not(old: str, new: str) -> None:
    assert not sqlcase.is_log_only(diff(old, new), LOGS)


CODECS = '''\
def save(path, text, data):
    path.write_text(text, encoding="utf-8")
    raw = text.encode("utf-8")
    back = data.decode(
        "utf-8", errors="replace")
    kind = "utf-8"
    tag = text.encode("not-a-codec")


class Store:
    def put(self, path, text):
        path.write_bytes(text.encode("utf-8"))
'''


@pytest.mark.parametrize(("old", "new"), [
    ('    path.write_text(text, encoding="utf-8")', '    path.write_text(text, encoding="UTF-8")'),
    ('    raw = text.encode("utf-8")', '    raw = text.encode("UTF-8")'),
    ('        "utf-8", errors="replace")', '        "UTF-8", errors="replace")'),
    # mutmut shows a method dedented to the left margin
    ('    path.write_bytes(text.encode("utf-8"))', '    path.write_bytes(text.encode("UTF-8"))'),
], ids=["encoding-keyword", "encode-argument", "decode-argument-on-its-own-line",
        "in-a-dedented-method"])
def test_the_letter_case_of_a_looked_up_codec_name_is_equivalent(old: str, new: str) -> None:
    assert sqlcase.is_codec_letter_case(diff(old, new), CODECS)
    assert sqlcase.reason_for(diff(old, new), CODECS) == sqlcase.CODEC_REASON
    assert (b"x".decode(new.split('"')[1]) == b"x".decode(old.split('"')[1]))


@pytest.mark.parametrize(("old", "new"), [
    ('    kind = "utf-8"', '    kind = "UTF-8"'),
    ('    tag = text.encode("not-a-codec")', '    tag = text.encode("NOT-A-CODEC")'),
    ('        "utf-8", errors="replace")', '        "utf-8", errors="REPLACE")'),
    ('    raw = text.encode("utf-8")', '    raw = text.encode("XXutf-8XX")'),
], ids=["a-plain-string", "not-a-codec", "the-errors-argument", "not-only-letter-case"])
def test_other_codec_changes_are_not(old: str, new: str) -> None:
    assert not sqlcase.is_codec_letter_case(diff(old, new), CODECS)


def test_a_line_that_also_occurs_outside_a_codec_lookup_proves_nothing() -> None:
    source = 'def f(a, b):\n    x = a.decode(\n        "utf-8")\n    y = print(\n        "utf-8")\n'
    line = '        "utf-8")'
    assert not sqlcase.is_codec_letter_case(diff(line, line.replace("utf", "UTF")), source)

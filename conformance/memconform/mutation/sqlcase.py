"""Equivalence classes proved from the code, not listed by hand.

`sql-letter-case`: a mutant that changes only the letter case of keywords, table, column or
function names in an SQL statement given to sqlite3's `execute`, `executemany` or
`executescript`. SQLite reads all of those in any case, so the statement, and every row it
reads or writes, is the same. Every changed line of the mutant's diff differs from the original
only in letter case, every changed character lies in a string literal that is part of the first
argument of such a call in the original source, and none lies in a quoted SQL literal
(`'running'`), a double-quoted identifier or a named parameter (`:now`), whose case SQLite does
keep.

`row-key-letter-case`: a mutant that changes only the letter case of a column name used to
read a fetched row (`row["retry_at"]`), where the row is the result of `fetchone()` or
`fetchall()` on a connection, or a parameter typed `sqlite3.Row`. `sqlite3.Row` looks column
names up without regard to case, so the value read is the same.

`log-call`: a mutant whose every change lies inside the parentheses of a call to the module's
logger (`log.warning(...)` and its siblings). Logging never raises on a message it cannot
format (it reports that on stderr), and nothing the protocol shows reads the log.

`codec-name-letter-case`: a mutant that changes only the letter case of a codec name given as
a string literal where Python looks the codec up (the first argument of `.encode(...)` or
`.decode(...)`, or an `encoding=` keyword): the literal must name a codec, and Python's codec
lookup ignores letter case, so `"UTF-8"` is the same codec as `"utf-8"`.
"""

from __future__ import annotations

import ast
import codecs
from collections.abc import Callable

EXECUTE = frozenset({"execute", "executemany", "executescript"})
REASON = ("changes only the letter case of SQL keywords, table, column or function names in a "
          "statement given to sqlite3 (no quoted SQL literal, quoted identifier or parameter "
          "name changed); SQLite reads those in any case, so the statement and every row it "
          "reads or writes are the same [class sql-letter-case, proved from the diff and the "
          "source by memconform.mutation.sqlcase]")


ROW_REASON = ("changes only the letter case of a column name used to read a fetched row "
              "(`row[\"...\"]` on the result of fetchone/fetchall or a parameter typed "
              "sqlite3.Row); sqlite3.Row looks column names up without regard to case, so the "
              "value read is the same [class row-key-letter-case, proved from the diff and the "
              "source by memconform.mutation.sqlcase]")
FETCH = frozenset({"fetchone", "fetchall"})
LOG_REASON = ("changes only the arguments of a call to the module's logger (its message, the "
              "values it shows, or how many there are); logging never raises on a message it "
              "cannot format, and nothing the protocol shows reads the log [class log-call, "
              "proved from the diff and the source by memconform.mutation.sqlcase]")
CODEC_REASON = ("changes only the letter case of a codec name where Python looks the codec up "
                "(`.encode`/`.decode`'s first argument or an `encoding=` keyword); codec lookup "
                "ignores letter case, so the codec is the same [class codec-name-letter-case, "
                "proved from the diff and the source by memconform.mutation.sqlcase]")
LOGGERS = frozenset({"log", "logger"})
LOG_LEVELS = frozenset({"debug", "info", "warning", "error", "exception", "critical"})


def _spans(lines: list[str], node: ast.expr, spans: dict[int, list[range]]) -> None:
    """Record the columns `node` covers on each of its lines."""
    end_line = node.end_lineno or node.lineno
    for number in range(node.lineno, end_line + 1):
        text = lines[number - 1]
        start = _column(text, node.col_offset) if number == node.lineno else 0
        stop = _column(text, node.end_col_offset or 0) if number == end_line else len(text)
        spans.setdefault(number, []).append(range(start, stop))


def _row_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names in `function` that hold a fetched row: assigned from `….fetchone()`, loop
    variables over `….fetchall()`, or parameters annotated `sqlite3.Row`."""
    names = {a.arg for a in [*function.args.args, *function.args.kwonlyargs]
             if a.annotation is not None and ast.unparse(a.annotation) == "sqlite3.Row"}
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "fetchone"):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if (isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Call)
                and isinstance(node.iter.func, ast.Attribute)
                and node.iter.func.attr in FETCH and isinstance(node.target, ast.Name)):
            names.add(node.target.id)
    return names


def log_call_columns(source: str) -> dict[int, list[range]]:
    """Per 1-based source line, the columns inside the parentheses of a logger call."""
    lines = source.splitlines()
    spans: dict[int, list[range]] = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in LOGGERS
                and node.func.attr in LOG_LEVELS and node.end_lineno is not None):
            continue
        first, last = node.func.end_lineno or node.lineno, node.end_lineno
        for number in range(first, last + 1):
            text = lines[number - 1]
            start = _column(text, node.func.end_col_offset or 0) + 1 if number == first else 0
            stop = _column(text, node.end_col_offset or 0) - 1 if number == last else len(text)
            spans.setdefault(number, []).append(range(start, stop))
    return spans


Columns = Callable[[str], dict[int, list[range]]]


def _changes(diff: str, source: str, columns: Columns
             ) -> tuple[list[tuple[str, str]], dict[int, list[range]], list[str]] | None:
    """The diff's changed line pairs, the allowed columns per source line and the source's
    lines; None when the diff does not pair up or the source does not parse."""
    pairs = changed_pairs(diff)
    if pairs is None:
        return None
    try:
        return pairs, columns(source), source.splitlines()
    except SyntaxError:
        return None


def is_log_only(diff: str, source: str) -> bool:
    """Whether every change of the mutant lies inside the parentheses of a logger call."""
    found = _changes(diff, source, log_call_columns)
    if found is None:
        return False
    pairs, allowed_at, source_lines = found
    for old, new in pairs:
        if old == new:
            return False
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while (tail < min(len(old), len(new)) - head
               and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
            tail += 1
        places = _occurrences(old, source_lines, allowed_at)
        if not places or not all(any(head + shift >= span.start
                                     and len(old) - tail + shift <= span.stop
                                     for span in spans) for shift, spans in places):
            return False
    return True


def _occurrences(old: str, source_lines: list[str], allowed_at: dict[int, list[range]]
                 ) -> list[tuple[int, list[range]]]:
    """(indentation shift, allowed columns) of every source line that is the diff's line
    `old` whatever its indentation. A change is proved only if every one of them allows it:
    a line that also occurs where the change is not allowed proves nothing."""
    places = []
    for number, line in enumerate(source_lines, 1):
        shift = _indent_shift(line, old)
        if shift is not None:
            places.append((shift, allowed_at.get(number, [])))
    return places


def _indent_shift(source_line: str, diff_line: str) -> int | None:
    """How far right `diff_line` sits in `source_line` when they differ only in indentation
    (mutmut shows a method dedented to the left margin), else None."""
    if source_line.lstrip() != diff_line.lstrip():
        return None
    return (len(source_line) - len(source_line.lstrip())) - (len(diff_line)
                                                              - len(diff_line.lstrip()))


def row_key_columns(source: str) -> dict[int, list[range]]:
    """Per 1-based source line, the columns of string keys that read a fetched row."""
    lines = source.splitlines()
    spans: dict[int, list[range]] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        rows = _row_names(function)
        for node in ast.walk(function):
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                    and node.value.id in rows and isinstance(node.slice, ast.Constant)
                    and isinstance(node.slice.value, str)):
                _spans(lines, node.slice, spans)
    return spans


def _is_codec(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        codecs.lookup(value)
    except LookupError:
        return False
    return True


def codec_columns(source: str) -> dict[int, list[range]]:
    """Per 1-based source line, the columns of string literals naming a codec where Python
    looks one up: `.encode(x)`, `.decode(x)` and `encoding=x`."""
    lines = source.splitlines()
    spans: dict[int, list[range]] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        named = [k.value for k in node.keywords if k.arg == "encoding"]
        if (isinstance(node.func, ast.Attribute) and node.func.attr in ("encode", "decode")
                and node.args):
            named.append(node.args[0])
        for value in named:
            if isinstance(value, ast.Constant) and _is_codec(value.value):
                _spans(lines, value, spans)
    return spans


def statement_columns(source: str) -> dict[int, list[range]]:
    """Per 1-based source line, the columns the first argument of an execute-family call
    spans on it."""
    lines = source.splitlines()
    spans: dict[int, list[range]] = {}
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in EXECUTE and node.args):
            _spans(lines, node.args[0], spans)
    return spans


def _column(text: str, utf8_offset: int) -> int:
    """ast's column (a UTF-8 byte offset) as a character index."""
    return len(text.encode("utf-8")[:utf8_offset].decode("utf-8", errors="ignore"))


def changed_pairs(diff: str) -> list[tuple[str, str]] | None:
    """The removed and added lines of a diff, paired in order; None unless they pair up."""
    removed = [line[1:] for line in diff.splitlines()
               if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    if not removed or len(removed) != len(added):
        return None
    return list(zip(removed, added, strict=True))


def _sql_positions(line: str) -> set[int]:
    """Indexes of the line's characters that are SQL words inside plain (not f-, not bytes)
    Python string literals, outside quoted SQL literals and identifiers and parameter names."""
    allowed: set[int] = set()
    i = 0
    while i < len(line):
        if line[i] not in "\"'":
            i += 1
            continue
        j = i
        while j > 0 and line[j - 1].isalpha():
            j -= 1
        plain = not set(line[j:i].lower()) & {"f", "b", "r"}
        quote, k = line[i], i + 1
        sql_quote: str | None = None
        while k < len(line) and line[k] != quote:
            char = line[k]
            if char == "\\":
                sql_quote = sql_quote or "escaped"
                k += 2
                continue
            if sql_quote is None and char == "'" and quote == '"':
                sql_quote = "'"
            elif sql_quote == "'" and char == "'":
                sql_quote = None
            elif (plain and sql_quote is None and char.isalpha()
                  and not _in_parameter(line, k, i)):
                allowed.add(k)
            k += 1
        i = k + 1
    return allowed


def _in_parameter(line: str, at: int, start: int) -> bool:
    """Whether the word holding `line[at]` is a named parameter (`:name`, `@name`, `$name`)."""
    k = at
    while k > start and (line[k - 1].isalnum() or line[k - 1] == "_"):
        k -= 1
    return k > start and line[k - 1] in ":@$"


def is_sql_letter_case(diff: str, source: str) -> bool:
    """Whether the mutant (its diff against `source`, the original module) only changes the
    letter case of SQL words in a statement sqlite3 executes."""
    return _only_case_within(diff, source, statement_columns, sql_words=True)


def is_row_key_letter_case(diff: str, source: str) -> bool:
    """Whether the mutant only changes the letter case of column names read from fetched
    rows."""
    return _only_case_within(diff, source, row_key_columns, sql_words=False)


def is_codec_letter_case(diff: str, source: str) -> bool:
    """Whether the mutant only changes the letter case of codec names Python looks up."""
    return _only_case_within(diff, source, codec_columns, sql_words=False)


def reason_for(diff: str, source: str) -> str | None:
    """The class reason that proves the mutant equivalent, or None."""
    if is_sql_letter_case(diff, source):
        return REASON
    if is_row_key_letter_case(diff, source):
        return ROW_REASON
    if is_codec_letter_case(diff, source):
        return CODEC_REASON
    if is_log_only(diff, source):
        return LOG_REASON
    return None


def _only_case_within(diff: str, source: str,
                      columns: Columns, *,
                      sql_words: bool) -> bool:
    found = _changes(diff, source, columns)
    if found is None:
        return False
    pairs, allowed_at, source_lines = found
    for old, new in pairs:
        if len(old) != len(new) or old == new or old.lower() != new.lower():
            return False
        changed = {k for k, (a, b) in enumerate(zip(old, new, strict=True)) if a != b}
        words = _sql_positions(old) if sql_words else set(range(len(old)))
        places = _occurrences(old, source_lines, allowed_at)
        if not places or not all(changed <= {k for k in words
                                             if any(k + shift in span for span in spans)}
                                 for shift, spans in places):
            return False
    return True

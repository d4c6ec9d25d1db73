"""One equivalence class proved from the code, not listed by hand: a mutant that changes only
the letter case of keywords, table, column or function names in an SQL statement given to
sqlite3's `execute`, `executemany` or `executescript`.

SQLite reads all of those in any case, so the statement, and every row it reads or writes, is
the same. The proof is mechanical: every changed line of the mutant's diff differs from the
original only in letter case, every changed character lies in a string literal that is part
of the first argument of such a call in the original source, and none lies in a quoted SQL
literal (`'running'`), a double-quoted identifier or a named parameter (`:now`), whose case
SQLite does keep.
"""

from __future__ import annotations

import ast

EXECUTE = frozenset({"execute", "executemany", "executescript"})
REASON = ("changes only the letter case of SQL keywords, table, column or function names in a "
          "statement given to sqlite3 (no quoted SQL literal, quoted identifier or parameter "
          "name changed); SQLite reads those in any case, so the statement and every row it "
          "reads or writes are the same [class sql-letter-case, proved from the diff and the "
          "source by memconform.mutation.sqlcase]")


def statement_columns(source: str) -> dict[int, list[range]]:
    """Per 1-based source line, the columns the first argument of an execute-family call
    spans on it."""
    lines = source.splitlines()
    spans: dict[int, list[range]] = {}
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in EXECUTE and node.args):
            first = node.args[0]
            end_line = first.end_lineno or first.lineno
            for number in range(first.lineno, end_line + 1):
                text = lines[number - 1]
                start = _column(text, first.col_offset) if number == first.lineno else 0
                stop = (_column(text, first.end_col_offset or 0) if number == end_line
                        else len(text))
                spans.setdefault(number, []).append(range(start, stop))
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
    pairs = changed_pairs(diff)
    if pairs is None:
        return False
    try:
        statements = statement_columns(source)
    except SyntaxError:
        return False
    source_lines = source.splitlines()
    for old, new in pairs:
        if len(old) != len(new) or old == new or old.lower() != new.lower():
            return False
        changed = {k for k, (a, b) in enumerate(zip(old, new, strict=True)) if a != b}
        words = _sql_positions(old)
        if not any(changed <= {k for k in words if any(k in span for span in spans)}
                   for number, spans in statements.items()
                   if source_lines[number - 1] == old):
            return False
    return True

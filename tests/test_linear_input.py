"""The fast paths of stage-1 input give exactly what the plain definitions give: redaction
skips only patterns that cannot match, truncation cuts bytes where the per-character walk
would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memref import redact
from memref.rollout_input import _marked
from memref.truncate import marker, truncate_middle

PIECES = ["sk-" + "A" * 24, "AKIA" + "B" * 16, "Bearer abcdefghijklmnopqrs", "api_key=secret12",
          "TOKEN: abcdefghij", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
          "eyJabcdefghij.eyJabcdefghij.abcdefghij", "ghp_" + "c" * 24, "github_pat_" + "d" * 22,
          "AIza" + "e" * 32, "xoxb-1234567890ab", '{"password": "hunter22"}',
          "https://user:pw@host/x", "\u0131d", "\u017fecret=abcdefghi", "PASSWORD=xyzxyzxyz",
          "PA\u017eSWORD", "ap\u0131_key=abcdefgh9", "AP\u0130_KEY=abcdefgh9",
          "to\u212aen=abcdefgh", '{"cred\u0131ntial": "hunter22"}', " ", "word",
          "\n", "\u00e9", "\U0001f600"]


def plain_redact(text: str) -> str:
    for pattern, replacement in redact.CODEX_RULES + redact.EXTENDED_RULES:
        text = pattern.sub(replacement, text)
    return text


def plain_marked(text: str, start: str, end: str) -> bool:
    head, tail = text.lstrip().lower(), text.rstrip().lower()
    return head.startswith(start.lower()) and tail.endswith(end.lower())


def plain_truncate(text: str, max_tokens: int) -> str:
    data = text.encode("utf-8")
    budget = max_tokens * 4
    if len(data) <= budget:
        return text
    left, right = budget // 2, budget - budget // 2
    head, tail, offset = [], [], 0
    for char in text:
        size = len(char.encode("utf-8"))
        if offset + size <= left:
            head.append(char)
        elif offset >= len(data) - right:
            tail.append(char)
        offset += size
    return "".join(head) + marker(-(-(len(data) - budget) // 4)) + "".join(tail)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=10))
def test_redaction_skips_only_what_cannot_match(parts: list[str]) -> None:
    text = "".join(parts)
    assert redact.redact(text) == plain_redact(text)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="a\u00e9\u20ac\U0001f600\n x", min_size=1, max_size=80),
       st.integers(min_value=1, max_value=20))
def test_truncation_by_bytes_keeps_whole_characters(text: str, max_tokens: int) -> None:
    assert truncate_middle(text, max_tokens) == plain_truncate(text, max_tokens)


def test_every_pattern_has_triggers() -> None:
    for pattern, _ in redact.CODEX_RULES + redact.EXTENDED_RULES:
        assert redact.TRIGGERS.get(pattern.pattern), pattern.pattern


MARKS = [("# AGENTS.md instructions", "</INSTRUCTIONS>"), ("<skill>", "</skill>")]
FRAGMENT_PIECES = [*(m for pair in MARKS for m in pair), "<SKILL>", "</sk\u0130ll>",
                   "\u03a3", "\u0130", "\u212a", " ", "\n", "\u3000", "\x1c", "\u0085", "x",
                   " " * 5000, "\n" * 4097]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENT_PIECES) | st.text(max_size=4), max_size=8),
       st.sampled_from(MARKS))
def test_marker_test_reads_only_the_ends(parts: list[str], marks: tuple[str, str]) -> None:
    text = "".join(parts)
    assert _marked(text, *marks) == plain_marked(text, *marks)

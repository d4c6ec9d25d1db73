"""Secret redaction (RED-01..RED-04): every secret shape becomes `[REDACTED_SECRET]`.

`CODEX_RULES` are the four replacements Codex 0.144.6 applies, in its order. `EXTENDED_RULES`
cover shapes the binary misses (hyphenated `sk-` keys, GitHub and Google keys, Slack tokens,
JSON-quoted secrets, PEM blocks, JWTs, credentials in URLs); the reference applies both.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED_SECRET]"

# Key words match by Unicode simple case folding, as Codex's regex engine does: Python's `re`
# also takes the dotless and dotted i (U+0131, U+0130) for `i` under (?i), which that folding
# does not, so each `i` of a key word is matched as `[iI]` only (the Kelvin sign and the long s
# are `k` and `s` in both).
CODEX_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"sk-[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._\-]{16,}\b"), f"Bearer {REDACTED}"),
    (re.compile(r"(?i)\b(ap(?-i:[iI])[_-]?key|token|secret|password)\b(\s*[:=]\s*)([\"']?)"
                r"[^\s\"']{8,}"), rf"\1\2\3{REDACTED}"),
)

_JSON_KEYS = (r"[A-Za-z0-9_\-]*(?:ap(?-i:[iI])[_-]?key|token|secret|password|passwd"
              r"|credent(?-i:[iI])al)[A-Za-z0-9_\-]*")
EXTENDED_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
                re.S), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"sk-(?:[A-Za-z0-9]+[_\-])+[A-Za-z0-9_\-]{16,}"), REDACTED),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(rf"(?i)(\\?\"{_JSON_KEYS}\\?\"\s*:\s*\\?\")(?:[^\"\\]|\\[^\"])+?(\\?\")"),
     rf"\1{REDACTED}\2"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+@"), rf"\1{REDACTED}@"),
)


_KEY_WORDS = ("api", "token", "secret", "password")
# Text every match of a pattern contains, case-folded: a pattern none of whose triggers occur
# in the folded text cannot match, and its scan (the cost on a large rollout) is skipped.
TRIGGERS: dict[str, tuple[str, ...]] = {
    CODEX_RULES[0][0].pattern: ("sk-",), CODEX_RULES[1][0].pattern: ("akia",),
    CODEX_RULES[2][0].pattern: ("bearer",), CODEX_RULES[3][0].pattern: _KEY_WORDS,
    EXTENDED_RULES[0][0].pattern: ("-----begin ",), EXTENDED_RULES[1][0].pattern: ("eyj",),
    EXTENDED_RULES[2][0].pattern: ("sk-",), EXTENDED_RULES[3][0].pattern: ("github_pat_",),
    EXTENDED_RULES[4][0].pattern: ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    EXTENDED_RULES[5][0].pattern: ("aiza",), EXTENDED_RULES[6][0].pattern: ("xox",),
    EXTENDED_RULES[7][0].pattern: (*_KEY_WORDS, "passwd", "credential"),
    EXTENDED_RULES[8][0].pattern: ("://",),
}


def _apply(rules: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str:
    """Each rule in order over the whole text, skipping rules that cannot match. Whether a
    trigger occurs is looked up once per version of the text (one scan of a large rollout per
    trigger, shared by the rules that name it)."""
    folded = text.casefold()
    present: dict[str, bool] = {}

    def occurs(trigger: str) -> bool:
        if trigger not in present:
            present[trigger] = trigger in folded
        return present[trigger]

    for pattern, replacement in rules:
        triggers = TRIGGERS.get(pattern.pattern)
        if triggers is not None and not any(occurs(t) for t in triggers):
            continue
        text, count = pattern.subn(replacement, text)
        if count:
            folded = text.casefold()
            present.clear()
    return text


def redact(text: str) -> str:
    """Codex's replacements, then the extended ones."""
    return _apply(CODEX_RULES + EXTENDED_RULES, text)

"""Secret redaction (RED-01..RED-04): every secret shape becomes `[REDACTED_SECRET]`.

`CODEX_RULES` are the four replacements Codex 0.144.6 applies, in its order. `EXTENDED_RULES`
cover shapes the binary misses (hyphenated `sk-` keys, GitHub and Google keys, Slack tokens,
JSON-quoted secrets, PEM blocks, JWTs, credentials in URLs); the reference applies both.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED_SECRET]"

CODEX_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"sk-[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._\-]{16,}\b"), f"Bearer {REDACTED}"),
    (re.compile(r"(?i)\b(api[_-]?key|token|secret|password)\b(\s*[:=]\s*)([\"']?)[^\s\"']{8,}"),
     rf"\1\2\3{REDACTED}"),
)

_JSON_KEYS = (r"[A-Za-z0-9_\-]*(?:api[_-]?key|token|secret|password|passwd|credential)"
              r"[A-Za-z0-9_\-]*")
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


def redact_codex(text: str) -> str:
    """Only the replacements the 0.144.6 binary applies."""
    for pattern, replacement in CODEX_RULES:
        text = pattern.sub(replacement, text)
    return text


def redact(text: str) -> str:
    """Codex's replacements, then the extended ones."""
    text = redact_codex(text)
    for pattern, replacement in EXTENDED_RULES:
        text = pattern.sub(replacement, text)
    return text

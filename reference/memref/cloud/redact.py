"""Secrets in a cloud memory's text become `[REDACTED]` (CLOUD-CONT-02)."""

from __future__ import annotations

import re

MARK = "[REDACTED]"
_KEY_VALUE = re.compile(
    r"(?i)\b([\w.-]*(?:api[_-]?key|password|passwd|secret|token|credential)s?)"
    r"([ \t]*[=:][ \t]*)(['\"]?)([^\s'\",;]+)")  # key and value on one line
_AUTHORIZATION = re.compile(
    r"(?i)\b(authorization[ \t]*:[ \t]*)(?:(bearer|basic|token)[ \t]+)?([^\s'\"]+)")
_BEARER = re.compile(r"(?i)\b(bearer[ \t]+)([A-Za-z0-9._~+/=-]{8,})")
_PREFIXED = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|gh[po]_[A-Za-z0-9]{16,}"
                       r"|xox[a-z]-[A-Za-z0-9-]{8,})")


def redact(text: str) -> str:
    text = _AUTHORIZATION.sub(lambda m: m.group(1) + (f"{m.group(2)} " if m.group(2) else "")
                              + MARK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MARK, text)
    text = _KEY_VALUE.sub(lambda m: m.group(1) + m.group(2) + m.group(3) + MARK, text)
    return _PREFIXED.sub(MARK, text)

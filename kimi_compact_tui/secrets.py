"""Secret-looking strings, masked wherever session text leaves the session
again: what a probe sends to a model, and the anchor block written back into
the summary. Whatever looks like a credential is replaced with ``[masked]``. The rule errs towards
masking (a long random-looking token after ``key=`` is masked even if it is
not a key); the name before it (``api_key=``) is kept, so the text still
reads.
"""

from __future__ import annotations

import re

MASK = "[masked]"

#: Tokens whose shape says what they are.
TOKEN_RES = (
    re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
    ),
    re.compile(r"\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}"),  # OpenAI-style, Anthropic
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWTs
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/-]{16,}=*"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in a URL
)
#: ``name = value`` where the name says secret: the value is masked.
ASSIGNED_RE = re.compile(
    r"(?i)\b([\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|credentials?|"
    r"auth[_-]?key|private[_-]?key|access[_-]?key)[\w.-]*[\"']?\s*[:=]\s*)"
    r"(?![\"']?\[masked\])(?![\"']?\d+\b)([\"']?)([^\s\"',;]{6,})\2"
)


def mask_secrets(text: str) -> str:
    """``text`` with every secret-looking string replaced by ``[masked]``."""
    if not text:
        return text
    for pattern in TOKEN_RES:
        text = pattern.sub(MASK, text)
    return ASSIGNED_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}", text)


#: The user info of a URL (``user:password@``), which can hold a key.
URL_USERINFO_RE = re.compile(r"(\w+://)[^/@\s]*@")


def without_userinfo(text: str) -> str:
    """``text`` with every URL's user info (``user:password@``) left out."""
    return URL_USERINFO_RE.sub(r"\1", text)

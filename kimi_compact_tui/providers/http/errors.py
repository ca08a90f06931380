"""HTTP error bodies and retry timing: what a refused request says, and how long
to wait before trying again.

Provider error bodies come in many shapes (``{"error": {"message", "code"}}``,
Anthropic's ``{"type": "error", "error": {"type", "message"}}``, ``{"detail": ...}``,
plain text); the message shown is always the provider's own,
labelled by status. Quota-exhausted 429s are not retryable.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kimi_compact_tui.providers._stream import one_line
from kimi_compact_tui.providers.base import ProviderConfig

if TYPE_CHECKING:
    import httpx

QUOTA_CODES = (
    "insufficient_quota",
    "quota_exceeded",
    "exceeded_current_quota_error",
    "billing_hard_limit_reached",
    "insufficient_balance",
)
QUOTA_WORDS = ("quota", "balance", "billing", "credit")


@dataclass
class HttpError:
    status: int
    message: str
    retryable: bool
    retry_after: float | None = None


def _provider_message(raw: bytes) -> tuple[str, str]:
    """(message, code-or-type) from an error body in any of the usual shapes."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        err = data.get("error", data)
        if isinstance(err, Mapping):
            msg = err.get("message") or err.get("msg") or err.get("detail") or ""
            code = err.get("code") or err.get("type") or ""
            if not msg and isinstance(data.get("message"), str):
                msg = data["message"]
            return (str(msg) if msg else one_line(text, 200)), str(code)
        if isinstance(err, str):
            return err, ""
        if isinstance(data.get("detail"), str):
            return data["detail"], ""
    return one_line(text, 200) or "(no error message in the response)", ""


def _retry_after(headers: httpx.Headers) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe_http_error(
    status: int,
    raw: bytes,
    headers: httpx.Headers,
    key_env: str | None,
    unsent: str | None = None,
) -> HttpError:
    """The one line for an HTTP error; ``key_env`` is the variable whose key
    was sent, ``unsent`` the kind's variable when its key does not belong to
    the URL and was not sent (a 401 says how to pair them)."""
    message, code = _provider_message(raw)
    lowered = f"{message} {code}".lower()
    retryable = False
    if status == 400:
        output_limit = "max_tokens" in lowered or "output token" in lowered
        if not output_limit and any(
            w in lowered for w in ("context", "token", "too long", "length", "maximum")
        ):
            label = "request too long for the model's context"
        else:
            label = "bad request"
    elif status == 401:
        label = "bad or missing API key"
        if key_env and not os.environ.get(key_env):
            label += f" ({key_env} is not set)"
        elif key_env:
            label += f" (from {key_env})"
        elif unsent:
            label += f" (no key sent: name {unsent} or another variable in provider.api_key_env)"
    elif status == 403:
        label = "forbidden"
    elif status == 404:
        label = "model or endpoint not found"
    elif status == 413:
        label = "request too large"
    elif status == 429:
        quota = code.lower() in QUOTA_CODES or any(w in lowered for w in QUOTA_WORDS)
        label = "quota exhausted" if quota else "rate limited"
        retryable = not quota
    elif status == 529:  # Anthropic: the API is overloaded
        label = "overloaded"
        retryable = True
    elif status >= 500:
        label = "server error"
        retryable = True
    else:
        label = "request refused"
    return HttpError(
        status=status,
        message=f"HTTP {status} {label}: {message}",
        retryable=retryable,
        retry_after=_retry_after(headers) if retryable else None,
    )


def backoff_delay(config: ProviderConfig, attempt: int, asked: float | None) -> float:
    """Seconds to wait before try ``attempt + 1``: what the server asked, else jittered."""
    if asked is not None:
        return float(min(asked, config.retry_cap))
    step = config.retry_base_delay * (2 ** (attempt - 1))
    return float(min(config.retry_cap, step * random.uniform(0.5, 1.0)))

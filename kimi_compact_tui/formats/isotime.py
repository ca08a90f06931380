"""The agents' record times, one way each: written as JavaScript's
``Date.prototype.toISOString`` prints them (UTC, milliseconds, ``Z``: Claude Code,
Codex and Gemini CLI all write this shape), and read back as seconds since the
epoch."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def iso_ms(now: datetime | None = None) -> str:
    """``now`` (default: this moment) as ``2026-01-01T10:00:00.000Z``; a time
    without a zone is taken as UTC."""
    when = datetime.now(UTC) if now is None else now
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def epoch_of(value: Any) -> float | None:
    """An ISO 8601 record time as seconds since the epoch (None when it is not
    one)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None

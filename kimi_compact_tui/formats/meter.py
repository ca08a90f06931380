"""The context meter of a session found on this machine (a picker row, a ``list``
line), read as cheaply as it can be.

Each agent's ``usage.py`` has a ``peek(ref, env)`` that reads the session's end
only (the last reply's usage is the last such record: a few kilobytes of a long
file, a few rows of a database). When that cannot decide (no reply since the
last compaction, so the fill is our estimate of the messages), the session is
read in full, if the caller allows it (:func:`meter_of` ``full=True``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from kimi_compact_tui.formats.context import ContextUsage, peeker_of, reader_of

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import SessionInfo
    from kimi_compact_tui.formats.storage import SessionRef

#: What :func:`meter_of` says when it was not read: no meter for the format, the
#: session could not be read, or it needs a full read that was not allowed.
NO_METER = "no meter"
UNREAD = "not read"


def has_meter(format_name: str) -> bool:
    """True when the format named so has a context meter."""
    return reader_of(format_name) is not None


def _ref(info: SessionInfo) -> SessionRef:
    """The session's file (a folder of a session resolved to its file)."""
    ref = info.ref
    if ref.key is None and ref.path.is_dir():
        from kimi_compact_tui.formats import registry

        return registry.resolve(ref)
    return ref


def meter_of(
    info: SessionInfo, env: Mapping[str, str] | None = None, full: bool = False
) -> tuple[ContextUsage | None, str | None]:
    """(the meter of the session ``info`` names, None) or (None, why not: NO_METER,
    UNREAD, or the one-line error reading it). Read from the session's end;
    ``full`` lets a session whose end cannot decide be read in full."""
    peek = peeker_of(info.format)
    if peek is None or info.error:
        return None, info.error or NO_METER
    try:
        ref = _ref(info)
        usage = peek(ref, env)
        if usage is not None or not full:
            return usage, None if usage is not None else UNREAD
        from kimi_compact_tui.formats.loader import load

        session = load(ref, hashed=False).session
        return session.format.context_usage(session, env), None
    except Exception as exc:  # noqa: BLE001 - one row's trouble is that row's note
        return None, " ".join(str(exc).split()) or type(exc).__name__


def meter_line(
    info: SessionInfo, env: Mapping[str, str] | None = None, full: bool = False
) -> str | None:
    """``73% · compacts at 84%`` for a picker row (None: no meter, or not read cheaply)."""
    usage, _ = meter_of(info, env, full)
    return usage.line() if usage is not None else None

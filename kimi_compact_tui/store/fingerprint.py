"""The conflict check's fingerprint, taken the way the session's format stores it.

A fingerprint (:class:`formats.storage.Fingerprint`) is of the session's own
content: a file's bytes (size, ``mtime_ns``, sha256), or a database session's
rows. The write strategy compares it inside the write
(``WriteStrategy.write``); :func:`fingerprint` takes one now.
"""

from __future__ import annotations

from pathlib import Path

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.storage import Fingerprint, SessionRef
from kimi_compact_tui.store.points import locate

__all__ = ["Fingerprint", "fingerprint"]


def fingerprint(where: str | Path | SessionRef) -> Fingerprint:
    """The fingerprint of the session at ``where`` (a file, a session folder or
    a session reference), as its format's strategy reads it."""
    try:
        target = locate(where)
    except SessionFormatError as exc:
        raise ApplyError(str(exc)) from None
    try:
        return target.format.storage.current(target.ref).fingerprint
    except OSError as exc:
        raise ApplyError(f"{target.ref}: cannot read ({exc.strerror or exc})") from None

"""The conflict check: a session file must still be what was loaded.

A fingerprint (size, ``mtime_ns``, sha256; :class:`formats.loader.Fingerprint`)
is taken from the very bytes that were parsed. Before anything is written the
file is read again; if any of the three differs (the agent appended a turn, an
editor saved it, ...) nothing is written.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.loader import Fingerprint
from kimi_compact_tui.formats.registry import resolve_session_path

__all__ = ["Fingerprint", "conflict_message", "fingerprint", "read_fingerprinted"]


def read_fingerprinted(path: Path) -> tuple[bytes, Fingerprint, int]:
    """The bytes of ``path``, their fingerprint and the file mode, read from
    one open file (so the three agree)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    fp = Fingerprint(len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return data, fp, st.st_mode & 0o7777


def fingerprint(path: str | Path) -> Fingerprint:
    """The fingerprint of the session file at ``path`` (a file or a session folder)."""
    try:
        p = resolve_session_path(path)
    except SessionFormatError as exc:
        raise ApplyError(str(exc)) from None
    try:
        return read_fingerprinted(p)[1]
    except OSError as exc:
        raise ApplyError(f"{p}: cannot read ({exc.strerror or exc})") from None


def conflict_message(path: Path, loaded: Fingerprint, now: Fingerprint) -> str:
    if now.size != loaded.size:
        what = f"its size went from {loaded.size:,} to {now.size:,} bytes"
    elif now.sha256 != loaded.sha256:
        what = "its content changed"
    else:
        what = "its modification time changed"
    return (
        f"{path}: changed on disk since it was loaded ({what}; the agent or another "
        "program wrote to it); nothing was written — reload the session and compact again"
    )

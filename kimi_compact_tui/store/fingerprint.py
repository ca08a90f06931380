"""What a session file looked like when it was loaded, and the conflict check.

A fingerprint (size, ``mtime_ns``, sha256) is taken from the very bytes that
were parsed (:func:`load_fingerprinted`). Before anything is written the file
is read again; if any of the three differs (the agent appended a turn, an
editor saved it, ...) nothing is written.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.model import Session


@dataclass(frozen=True)
class Fingerprint:
    size: int
    mtime_ns: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


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
    from kimi_compact_tui.formats import resolve_session_path

    try:
        p = resolve_session_path(path)
    except SessionFormatError as exc:
        raise ApplyError(str(exc)) from None
    try:
        return read_fingerprinted(p)[1]
    except OSError as exc:
        raise ApplyError(f"{p}: cannot read ({exc.strerror or exc})") from None


def load_fingerprinted(path: str | Path, fmt: str | None = None) -> tuple[Session, Fingerprint]:
    """Load a session and take its fingerprint from the same bytes (no window
    in which the file could change between the two)."""
    from kimi_compact_tui.formats import parse_session_bytes, resolve_session_path

    p = resolve_session_path(path)
    try:
        data, fp, _mode = read_fingerprinted(p)
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return parse_session_bytes(data, p, fmt), fp


def conflict_message(path: Path, loaded: Fingerprint, now: Fingerprint) -> str:
    if now.size != loaded.size:
        what = f"its size went from {loaded.size} to {now.size} bytes"
    elif now.sha256 != loaded.sha256:
        what = "its content changed"
    else:
        what = "its modification time changed"
    return (
        f"{path}: changed on disk since it was loaded ({what}; the agent or another "
        "program wrote to it); nothing was written — reload the session and compact again"
    )

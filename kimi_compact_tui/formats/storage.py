"""Where a session lives and what its content is, independent of the format.

- :class:`SessionRef`: where a session lives (a file, or a database file)
  plus a key naming it inside (None for a plain file, the common case: one
  session is one file). Many sessions may share one database; each has its
  own reference, its own restore points and its own audit log.
- :class:`Located`: what names one session by its reference (a session found
  for the picker, a write's result, a restore's target): its ``path`` is the
  reference's file.
- :class:`Fingerprint`: what a session's *own* content looked like when it was
  read (for a file: its bytes; for a database: that session's rows, exported).
  The write strategy takes it and compares it (``formats.base.WriteStrategy``).
- :func:`check_bytes`: what no session file holds (byte formats only).

Nothing here imports a format: the contract (``formats/base.py``) and the
strategies (``formats/strategies.py``) build on it.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError

#: Separates a database file from a session key when a session is named in text
#: (``DB#KEY``).
KEY_MARK = "#"
#: The first bytes of a SQLite database file: the one kind of file here that
#: holds many sessions (a database format names them by key).
SQLITE_MAGIC = b"SQLite format 3\x00"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class SessionRef:
    """Where a session lives: ``path`` (the file that holds it, always absolute)
    and ``key`` (which session inside it; None when the file is the session).

    It is the session's one identity: made once from what a person typed
    (:func:`formats.registry.resolve`), then carried as it is by the loader, the
    session, the picker, the store and every command. ``path`` is made absolute
    when the reference is made, so what the store records (the audit log, the
    restore points) names the same file from any folder."""

    path: Path
    key: str | None = None

    def __post_init__(self) -> None:
        if not self.path.is_absolute() or ".." in self.path.parts:
            object.__setattr__(self, "path", Path(os.path.abspath(self.path)))

    def __str__(self) -> str:
        return str(self.path) if self.key is None else f"{self.path}{KEY_MARK}{self.key}"

    def shown(self) -> str:
        """The reference as a person reads it on a screen: relative to the
        current folder when the file is inside it, else from ``~`` when under
        the home folder, else absolute (what the store records stays absolute)."""
        path = self.path
        try:
            here = Path.cwd()
        except OSError:  # the current folder is gone
            here = Path(path.anchor)
        for base, prefix in ((here, ""), (Path.home(), "~/")):
            try:
                rel = path.relative_to(base)
            except ValueError:
                continue
            path = Path(prefix + str(rel)) if prefix or str(rel) != "." else path
            break
        return str(path) if self.key is None else f"{path}{KEY_MARK}{self.key}"

    @property
    def name(self) -> str:
        """The name its restore points and audit log are kept under: the file
        name, and for a keyed session the key too (made safe for a file name),
        so sessions sharing one database never share a backup or a log."""
        if self.key is None:
            return self.path.name
        safe = _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", self.key)
        return f"{self.path.name}{KEY_MARK}{safe}"

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "key": self.key}


def split_key(text: str) -> tuple[Path, str] | None:
    """``DB#KEY`` as text: the file ``DB`` and the key, when ``DB`` is a file and
    the whole text names nothing; else None (the text is a path, or an id)."""
    if KEY_MARK not in text or os.path.lexists(os.path.expanduser(text)):
        return None
    where, _, key = text.rpartition(KEY_MARK)
    base = Path(where).expanduser()
    if key and where and base.is_file():
        return base, key
    return None


class Located:
    """A record of one session named by its ``ref`` (a dataclass field of the
    subclass): :attr:`path` is the file that holds it."""

    ref: SessionRef

    @property
    def path(self) -> Path:
        """The file (or session folder) that holds the session (``ref.path``)."""
        return self.ref.path


@dataclass(frozen=True)
class Fingerprint:
    """What a session's own content looked like when it was read: its size,
    ``mtime_ns`` (0 when the store has no modification time of its own, as
    for rows in a database) and the sha256 of the very content parsed ("" when
    not hashed)."""

    size: int
    mtime_ns: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


def conflict_message(where: object, loaded: Fingerprint, now: Fingerprint) -> str:
    """The one-line refusal for a session that is not what was loaded."""
    if now.size != loaded.size:
        what = f"its size went from {loaded.size:,} to {now.size:,} bytes"
    elif now.sha256 != loaded.sha256:
        what = "its content changed"
    else:
        what = "its modification time changed"
    return (
        f"{where}: changed on disk since it was loaded ({what}; the agent or another "
        "program wrote to it); nothing was written — reload the session and compact again"
    )


def check_bytes(data: bytes, path: Path) -> None:
    """Refuse what no session file holds: an empty file, NUL bytes (a binary
    file) and a byte-order mark, naming the line (no decoded copy is made).
    Byte formats only: a database is not a file of text."""
    if not data.strip():
        raise SessionFormatError(f"{path}: file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise SessionFormatError(f"{path}:{line}: contains a NUL byte (binary file?)")
    if data.startswith(codecs.BOM_UTF8):
        raise SessionFormatError(f"{path}:1: starts with a byte-order mark; save it as UTF-8")

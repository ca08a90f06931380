"""The one load path: a path (file, session folder or session id) → a session
and the fingerprint of the very bytes parsed.

Every front end loads through :func:`load` (the compaction job calls it for
``compact``, the TUI and the facade; ``diff``, ``retention`` and the store use
it or :func:`parse_bytes` on bytes they already hold). Line-based formats are
streamed from the file (no copy of the whole file is held; see
:mod:`formats.lines`).
"""

from __future__ import annotations

import codecs
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import Session, SessionFormat
from kimi_compact_tui.formats.lines import Lines
from kimi_compact_tui.fsutil import atomic_write_bytes, gc_paused, read_bytes


@dataclass(frozen=True)
class Fingerprint:
    """What a session file looked like when it was read: size, ``mtime_ns`` and
    sha256 of the very bytes parsed ("" when not hashed)."""

    size: int
    mtime_ns: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


@dataclass(frozen=True)
class Loaded:
    """A session as loaded, with its file's fingerprint."""

    session: Session
    fingerprint: Fingerprint

    @property
    def path(self) -> Path:
        assert self.session.path is not None
        return self.session.path


def check_bytes(data: bytes, path: Path) -> None:
    """Refuse what no session holds: an empty file, NUL bytes (a binary file)
    and a byte-order mark, naming the line (no decoded copy is made)."""
    if not data.strip():
        raise SessionFormatError(f"{path}: file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise SessionFormatError(f"{path}:{line}: contains a NUL byte (binary file?)")
    if data.startswith(codecs.BOM_UTF8):
        raise SessionFormatError(f"{path}:1: starts with a byte-order mark; save it as UTF-8")


def load(path: str | Path, fmt: SessionFormat | None = None, *, hashed: bool = True) -> Loaded:
    """Load a session (a file, a session folder or a session id any format
    knows); raise :class:`SessionFormatError` with one line naming the file and
    place. The fingerprint's sha256 is "" unless ``hashed``."""
    p = registry.resolve_session_path(path)
    try:
        fh = open(p, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        read_bytes(p, "session file", SessionFormatError)  # the one error mapping
        raise SessionFormatError(f"{p}: cannot read ({exc.strerror or exc})") from None
    with fh:
        mtime_ns = os.fstat(fh.fileno()).st_mtime_ns
        try:
            head = fh.read(registry.HEAD_BYTES)
            if not head.strip() and len(head) < registry.HEAD_BYTES:
                raise SessionFormatError(f"{p}: file is empty")
            plugin = fmt if fmt is not None else registry.detect(p, head)
            if not plugin.streams_lines:
                data = head + fh.read()
                check_bytes(data, p)
                with gc_paused():
                    session = plugin.parse(data, p)
                sha = hashlib.sha256(data).hexdigest() if hashed else ""
                return Loaded(session, Fingerprint(len(data), mtime_ns, sha))
            fh.seek(0)
            lines = Lines(p, fh=fh, hashed=hashed)
            with gc_paused():
                session = plugin.parse_lines(lines, p)
        except OSError as exc:
            raise SessionFormatError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return Loaded(session, Fingerprint(lines.size, mtime_ns, lines.sha256 if hashed else ""))


def load_session(path: str | Path, fmt: SessionFormat | None = None) -> Session:
    """:func:`load`, for callers that will not write the session back."""
    return load(path, fmt, hashed=False).session


def parse_bytes(data: bytes, path: Path, fmt: SessionFormat | None = None) -> Session:
    """Parse the bytes of a session file with its format (detected unless
    ``fmt`` is given)."""
    check_bytes(data, path)
    plugin = fmt if fmt is not None else registry.detect(path, data[: registry.HEAD_BYTES])
    # Parsing allocates one container per message and part and frees none of
    # them: the cyclic GC would rescan an ever larger heap for nothing.
    with gc_paused():
        if plugin.streams_lines:
            return plugin.parse_lines(Lines(path, data=data), path)
        return plugin.parse(data, path)


def dump_session(session: Session) -> bytes:
    """The file's bytes for ``session``, as its format writes them."""
    return session.format.dump(session)


def save_session(session: Session, path: str | Path) -> None:
    """Write ``session`` to ``path`` atomically (a new file or a replace)."""
    atomic_write_bytes(Path(path), dump_session(session))

"""The one load path: a session reference (a file, a session folder, a
session id, or ``DB#KEY`` for one session in a database) → a session and the
fingerprint of the very content parsed.

Every front end loads through :func:`load` (the compaction job calls it for
``compact``, the TUI and the facade; ``diff``, ``retention`` and the store use
it or :func:`parse_bytes` on bytes they already hold). Byte formats are read
here: line-based ones are streamed from the file (no copy of the whole file is
held; see :mod:`formats.lines`), the others read whole, and NUL bytes are
refused. A format whose storage is not byte-based (a database) is read by its
own :meth:`SessionFormat.read_session` hook, which fingerprints that session's
own rows, not the whole file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.base import FileFormat, Session, SessionFormat
from kimi_compact_tui.formats.lines import Lines
from kimi_compact_tui.formats.storage import Fingerprint, SessionRef, check_bytes
from kimi_compact_tui.formats.strategies import parse_file_bytes
from kimi_compact_tui.fsutil import atomic_write_bytes, gc_paused, read_bytes

if TYPE_CHECKING:
    from kimi_compact_tui.formats.database import DatabaseFormat

__all__ = [
    "Fingerprint",
    "Loaded",
    "SessionRef",
    "dump_session",
    "load",
    "load_session",
    "parse_bytes",
    "save_session",
]


@dataclass(frozen=True)
class Loaded:
    """A session as loaded, with the fingerprint of its content."""

    session: Session
    fingerprint: Fingerprint

    @property
    def ref(self) -> SessionRef:
        return self.session.ref

    @property
    def path(self) -> Path:
        return self.ref.path


def _read_stored(ref: SessionRef, fmt: SessionFormat | None, hashed: bool) -> Loaded:
    """A session kept in a store that is not a file of bytes (a database)."""
    if fmt is None:
        try:
            with open(ref.path, "rb") as fh:
                head = fh.read(registry.HEAD_BYTES)
        except OSError as exc:
            raise SessionFormatError(f"{ref.path}: cannot read ({exc.strerror or exc})") from None
        fmt = registry.detect(ref.path, head)
    if isinstance(fmt, FileFormat):
        raise SessionFormatError(f"{ref}: a {fmt.label} holds one session; name the file alone")
    # Every format is a FileFormat or a DatabaseFormat (whose module loads with it).
    session, fingerprint = cast("DatabaseFormat", fmt).read_session(ref, hashed)
    return Loaded(session, fingerprint)


Named = str | Path | SessionRef


def load(named: Named, fmt: SessionFormat | None = None, *, hashed: bool = True) -> Loaded:
    """Load a session (what :func:`formats.registry.resolve` takes: a file, a
    session folder, a session id any format knows, ``DB#KEY``, or the reference
    it made); raise :class:`SessionFormatError` with one line naming the file and
    place. The fingerprint's sha256 is "" unless ``hashed``."""
    ref = registry.resolve(named)
    if ref.key is not None:
        return _read_stored(ref, fmt, hashed)
    p = ref.path
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
            if not isinstance(plugin, FileFormat):
                return _read_stored(ref, plugin, hashed)
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


def load_session(path: Named, fmt: SessionFormat | None = None) -> Session:
    """:func:`load`, for callers that will not write the session back."""
    return load(path, fmt, hashed=False).session


def parse_bytes(data: bytes, path: Path, fmt: SessionFormat | None = None) -> Session:
    """Parse the bytes of a session file with its format (detected unless
    ``fmt`` is given; a format that is not a file of bytes is refused)."""
    plugin = fmt if fmt is not None else registry.detect(path, data[: registry.HEAD_BYTES])
    if not isinstance(plugin, FileFormat):
        raise SessionFormatError(f"{path}: a {plugin.label} is not read from bytes")
    return parse_file_bytes(plugin, data, path)


def dump_session(session: Session) -> bytes:
    """The file's bytes for ``session``, as its format writes them (a session
    that is not a file of its own, such as rows in a database, is refused in
    one line by its format's ``dump``)."""
    return session.format.dump(session)


def save_session(session: Session, path: str | Path) -> None:
    """Write ``session`` to ``path`` atomically (a new file or a replace)."""
    atomic_write_bytes(Path(path), dump_session(session))

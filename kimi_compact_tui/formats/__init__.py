"""Session file formats: loading and lossless saving, through the registry.

``load_session(path)`` takes any file or session folder a registered format
recognises (``formats.registry``; each format is one module implementing
``formats.base.SessionFormat``). ``dump_session`` gives the bytes
``save_session`` writes (atomically).
"""

from __future__ import annotations

import codecs
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.registry import resolve_session_path
from kimi_compact_tui.fsutil import atomic_write_bytes, gc_paused, read_bytes
from kimi_compact_tui.model import Session

__all__ = [
    "check_bytes",
    "detect_format",
    "dump_session",
    "load_session",
    "parse_session",
    "parse_session_bytes",
    "resolve_session_path",
    "save_session",
]


def detect_format(path: Path, text: str) -> str:
    """The name of the format of ``path`` (``text``: its first characters)."""
    return registry.detect(path, text.encode("utf-8")).name


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


def load_session(path: str | Path, fmt: str | None = None) -> Session:
    """Load a session; raise :class:`SessionFormatError` with one clear line."""
    p = resolve_session_path(path)
    return parse_session_bytes(read_bytes(p, "session file", SessionFormatError), p, fmt)


def parse_session(text: str, path: Path, fmt: str | None = None) -> Session:
    """Parse a session held as text (see :func:`parse_session_bytes`)."""
    return parse_session_bytes(text.encode("utf-8"), path, fmt)


def parse_session_bytes(data: bytes, path: Path, fmt: str | None = None) -> Session:
    """Parse the bytes of a session file with its format (detected unless
    ``fmt`` names one)."""
    check_bytes(data, path)
    plugin = registry.get(fmt) if fmt else registry.detect(path, data[: registry.HEAD_BYTES])
    # Parsing allocates one container per message and part and frees none of
    # them, so the cyclic GC would scan an ever larger heap again and again
    # for nothing (about a third of the load time of 100,000 messages).
    # Paused for the parse only; there are no cycles to collect here.
    with gc_paused():
        return plugin.parse(data, path)


def dump_session(session: Session) -> bytes:
    return registry.format_of(session).dump(session)


def save_session(session: Session, path: str | Path) -> None:
    atomic_write_bytes(Path(path), dump_session(session))

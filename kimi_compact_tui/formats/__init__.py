"""Session file formats: detection, loading and lossless saving.

``load_session(path)`` accepts a kimi-cli ``context.jsonl``, a kimi-cli
session folder holding one, an OpenAI-style ``.json`` (a list of messages or
an object with ``messages``) or ``.jsonl``. ``dump_session`` gives the bytes
``save_session`` writes (atomically).
"""

from __future__ import annotations

import codecs
import re
import stat
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import kimi, openai
from kimi_compact_tui.fsutil import atomic_write_bytes, decode_utf8, gc_paused, read_bytes
from kimi_compact_tui.model import Session

FORMATS = ("kimi", "openai-json", "openai-jsonl")
_KIMI_NAME = re.compile(r"^context(_\d+)?\.jsonl$")


def resolve_session_path(path: str | Path) -> Path:
    """The session file for ``path`` (a file, or a kimi-cli session folder)."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except FileNotFoundError:
        raise SessionFormatError(f"{p}: no such file or folder") from None
    except PermissionError:
        raise SessionFormatError(f"{p}: permission denied") from None
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot open ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        candidate = p / "context.jsonl"
        if candidate.is_file():
            return candidate
        raise SessionFormatError(f"{p}: folder holds no kimi-cli session (no context.jsonl)")
    if not stat.S_ISREG(st.st_mode):
        raise SessionFormatError(f"{p}: not a regular file")
    return p


def detect_format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        if _KIMI_NAME.match(path.name) or kimi.looks_like_kimi(text):
            return "kimi"
        return "openai-jsonl"
    if suffix == ".json":
        return "openai-json"
    stripped = text.lstrip()
    if kimi.looks_like_kimi(text):
        return "kimi"
    if stripped.startswith("["):
        return "openai-json"
    if stripped.startswith("{") and "\n{" in stripped:
        return "openai-jsonl"
    if stripped.startswith("{"):
        return "openai-json"
    raise SessionFormatError(
        f"{path}: unknown session format (expected kimi-cli context.jsonl, "
        f"OpenAI .json or .jsonl)"
    )


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
    """Parse the bytes of a session file. Line-based formats are decoded line
    by line and keep each line's bytes (see :mod:`formats.lines`)."""
    check_bytes(data, path)
    fmt = fmt or detect_format(path, data[:65536].decode("utf-8", "ignore"))
    # Parsing allocates one container per message and part and frees none of
    # them, so the cyclic GC would scan an ever larger heap again and again
    # for nothing (about a third of the load time of 100,000 messages).
    # Paused for the parse only; there are no cycles to collect here.
    with gc_paused():
        if fmt == "kimi":
            return kimi.parse(data, path)
        if fmt == "openai-jsonl":
            return openai.parse_jsonl(data, path)
        if fmt == "openai-json":
            return openai.parse_json(decode_utf8(data, path, SessionFormatError), path)
    raise SessionFormatError(f"{path}: unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def dump_session(session: Session) -> bytes:
    if session.format == "kimi":
        return kimi.serialize(session)
    if session.format == "openai-json":
        return openai.serialize_json(session)
    if session.format == "openai-jsonl":
        return openai.serialize_jsonl(session)
    raise SessionFormatError(f"unknown format {session.format!r}")


def save_session(session: Session, path: str | Path) -> None:
    atomic_write_bytes(Path(path), dump_session(session))

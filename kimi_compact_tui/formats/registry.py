"""The registry of session formats: the one place that knows which exist.

Detection asks each specific format in turn (``recognise``), then checks for
a known session kind that is not supported yet (``formats.foreign``), then
the fallback formats (OpenAI ``.jsonl`` and ``.json``). A folder is resolved
by the first format that finds its session file in it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import foreign
from kimi_compact_tui.formats.base import SessionFormat, SessionInfo
from kimi_compact_tui.formats.kimi import KimiCliFormat
from kimi_compact_tui.formats.kimi_code import KimiCodeFormat
from kimi_compact_tui.formats.openai import OpenAIJsonFormat, OpenAIJsonlFormat
from kimi_compact_tui.model import Session

# One line per format, specific formats first (the order detection asks in).
FORMATS: list[SessionFormat] = [
    KimiCodeFormat(),
    KimiCliFormat(),
    OpenAIJsonlFormat(),
    OpenAIJsonFormat(),
]

HEAD_BYTES = 65536


def names() -> list[str]:
    return [f.name for f in FORMATS]


def get(name: str) -> SessionFormat:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise SessionFormatError(f"unknown format {name!r} (known: {', '.join(names())})")


def format_of(session: Session) -> SessionFormat:
    return get(session.format)


def _stat(p: Path) -> os.stat_result:
    try:
        return p.stat()
    except FileNotFoundError:
        raise SessionFormatError(f"{p}: no such file or folder") from None
    except PermissionError:
        raise SessionFormatError(f"{p}: permission denied") from None
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot open ({exc.strerror})") from None


def resolve_session_path(path: str | Path) -> Path:
    """The session file for ``path`` (a file, or a session folder any format
    recognises)."""
    p = Path(path).expanduser()
    st = _stat(p)
    if stat.S_ISDIR(st.st_mode):
        for fmt in FORMATS:
            found = fmt.resolve_folder(p)
            if found is not None:
                return found
        kinds = ", ".join(f.label for f in FORMATS if not getattr(f, "fallback", False))
        raise SessionFormatError(f"{p}: folder holds no session ({kinds})")
    if not stat.S_ISREG(st.st_mode):
        raise SessionFormatError(f"{p}: not a regular file")
    return p


def detect(path: Path, head: bytes) -> SessionFormat:
    """The format of the file at ``path`` whose first bytes are ``head``."""
    specific = [f for f in FORMATS if not getattr(f, "fallback", False)]
    for fmt in specific:
        if fmt.recognise(path, head):
            return fmt
    what = foreign.identify(head)
    if what is not None:
        raise SessionFormatError(
            f"{path}: this looks like {what}, which is not supported yet "
            f"(supported: {', '.join(f.label for f in FORMATS)})"
        )
    for fmt in FORMATS:
        if fmt not in specific and fmt.recognise(path, head):
            return fmt
    raise SessionFormatError(
        f"{path}: unknown session format (expected {', '.join(f.label for f in FORMATS)})"
    )


def discover_all(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> list[SessionInfo]:
    """Every session the formats find on this machine, newest first."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    found: list[SessionInfo] = []
    for fmt in FORMATS:
        found.extend(fmt.discover(env, home))
    found.sort(key=lambda info: info.updated or 0.0, reverse=True)
    return found

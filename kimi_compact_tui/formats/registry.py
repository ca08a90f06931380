"""The registry of session formats: the one place that knows which exist.

Detection asks each specific format in turn (``recognise``), then checks for
a known file that is not a session this tool opens (``formats.foreign``), then
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
from kimi_compact_tui.formats.claude_code.plugin import FORMAT as CLAUDE_CODE
from kimi_compact_tui.formats.codex.plugin import FORMAT as CODEX
from kimi_compact_tui.formats.gemini_cli import FORMAT as GEMINI_CLI
from kimi_compact_tui.formats.kimi import FORMAT as KIMI_CLI
from kimi_compact_tui.formats.kimi_code.plugin import FORMAT as KIMI_CODE
from kimi_compact_tui.formats.openai import JSON_FORMAT, JSONL_FORMAT

# One line per format, specific formats first (the order detection asks in).
FORMATS: list[SessionFormat] = [
    KIMI_CODE,
    CLAUDE_CODE,
    CODEX,
    KIMI_CLI,
    GEMINI_CLI,
    JSONL_FORMAT,
    JSON_FORMAT,
]

HEAD_BYTES = 65536


def names() -> list[str]:
    return [f.name for f in FORMATS]


def get(name: str) -> SessionFormat:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise SessionFormatError(f"unknown format {name!r} (known: {', '.join(names())})")


def specific() -> list[SessionFormat]:
    """The formats recognised by their own marks (not the fallbacks)."""
    return [f for f in FORMATS if not f.fallback]


def find_by_id(text: str) -> Path | None:
    """The session folder a format knows by this id (e.g. kimi-code's), or None."""
    if not text or "/" in text or text.startswith("."):
        return None
    for fmt in FORMATS:
        found = fmt.find_session(text, os.environ, Path.home())
        if found is not None:
            return Path(found)
    return None


def _stat(p: Path) -> os.stat_result:
    try:
        return p.stat()
    except FileNotFoundError:
        raise SessionFormatError(
            f"{p}: no such file or folder (nor a session id any format knows)"
        ) from None
    except PermissionError:
        raise SessionFormatError(f"{p}: permission denied") from None
    except OSError as exc:
        raise SessionFormatError(f"{p}: cannot open ({exc.strerror})") from None


def resolve_session_path(path: str | Path) -> Path:
    """The session file for ``path`` (a file, or a session folder any format
    recognises)."""
    p = Path(path).expanduser()
    if not p.exists():
        p = find_by_id(str(path)) or p
    st = _stat(p)
    if stat.S_ISDIR(st.st_mode):
        for fmt in FORMATS:
            found = fmt.resolve_folder(p)
            if found is not None:
                return found
        kinds = ", ".join(f.label for f in specific())
        raise SessionFormatError(f"{p}: folder holds no session ({kinds})")
    if not stat.S_ISREG(st.st_mode):
        raise SessionFormatError(f"{p}: not a regular file")
    return p


def detect(path: Path, head: bytes) -> SessionFormat:
    """The format of the file at ``path`` whose first bytes are ``head``."""
    for fmt in specific():
        if fmt.recognise(path, head):
            return fmt
    refused = foreign.refusal(path, head)
    if refused is not None:
        raise SessionFormatError(refused)
    for fmt in FORMATS:
        if fmt.fallback and fmt.recognise(path, head):
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


def describe_path(path: Path) -> SessionInfo:
    """A picker row for a session given by path (a file or a folder): the
    format that reads it describes it cheaply; one line of error otherwise."""
    try:
        target = resolve_session_path(path)
        with open(target, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        fmt = detect(target, head)
    except (SessionFormatError, OSError) as exc:
        return SessionInfo(path, "?", title=path.name, error=str(exc))
    info = fmt.describe(path)
    info.title = info.title or path.name
    return info


def discovery_note(
    sessions: list[SessionInfo], env: Mapping[str, str] | None = None, home: Path | None = None
) -> str:
    """One line saying what was found where, e.g. "4 kimi-cli sessions under
    ~/.kimi/sessions", or where nothing was found."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    parts, nowhere = [], []
    for fmt in FORMATS:
        roots = fmt.discovery_roots(env, home)
        if not roots:
            continue
        where = ", ".join(str(p) for p in roots)
        n = sum(1 for info in sessions if info.format == fmt.name)
        agent = fmt.agent or fmt.name
        if n:
            parts.append(f"{n:,} {agent} session{'s' if n != 1 else ''} under {where}")
        else:
            nowhere.append(f"{agent} sessions found under {where}")
    if not parts and not nowhere:
        return "No sessions found"
    missing = [("no " if parts or i else "No ") + what for i, what in enumerate(nowhere)]
    return "; ".join(parts + missing)

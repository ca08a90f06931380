"""Finding Claude Code sessions on this machine.

The root is ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; transcripts are
``projects/<project key>/<session uuid>.jsonl`` (the key is the work folder with
every non-alphanumeric character as ``-``; it is never recomputed here: the work
folder is read from the records). Only files named by a session uuid are
listed: sub-agent transcripts (``agent-*.jsonl``, and anything in a session's own
folder), backups and audit logs are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import SessionInfo
from kimi_compact_tui.formats.claude_code.chain import _millis
from kimi_compact_tui.formats.journal import FileFinder
from kimi_compact_tui.formats.storage import SessionRef

COUNT_LIMIT = 64 * 1024 * 1024  # larger transcripts are listed without a message count
SESSION_ID = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


def root_of(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def projects_of(env: Mapping[str, str], home: Path) -> Path:
    return root_of(env, home) / "projects"


def transcripts(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every main-session transcript under the projects folder."""
    found: list[Path] = []
    try:
        projects = sorted(p for p in projects_of(env, home).iterdir() if p.is_dir())
    except OSError:
        return []
    for project in projects:
        try:
            files = sorted(project.glob("*.jsonl"))
        except OSError:
            continue
        found.extend(f for f in files if SESSION_ID.match(f.stem) and f.is_file())
    return found


def find_session(session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
    """The transcript of the session with this id, or None."""
    if not SESSION_ID.match(session_id):
        return None
    try:
        matches = sorted(projects_of(env, home).glob(f"*/{session_id}.jsonl"))
    except OSError:
        return None
    matches = [m for m in matches if m.is_file()]
    if not matches:
        return None
    return max(matches, key=lambda p: p.stat().st_mtime)


def describe(path: Path, format_name: str, read: Callable[[bytes, Path], Any]) -> SessionInfo:
    """A picker row for one transcript: ``read(data, path)`` gives its state and
    messages."""
    info = SessionInfo(ref=SessionRef(path), format=format_name, session_id=path.stem)
    try:
        st = path.stat()
        info.updated = st.st_mtime
        if st.st_size > COUNT_LIMIT:
            return info
        state, messages = read(path.read_bytes(), path)
    except OSError as exc:
        info.error = f"{path}: cannot read ({exc.strerror or exc})"
        return info
    except UserError as exc:
        info.error = str(exc)
        return info
    info.message_count = len(messages)
    info.title = state.title
    info.work_dir = state.cwd
    info.session_id = state.session_id or path.stem
    leaf = state.leaf_record()
    millis = _millis(leaf.timestamp) if leaf is not None else None
    info.last_record = millis / 1000 if millis is not None else None
    return info


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [projects_of(env, home)]


#: How the plugin finds these sessions: one file a session.
FINDER = FileFinder(transcripts, describe, roots)

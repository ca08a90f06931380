"""Where opencode's database is, and its sessions for a picker.

One database holds every session: ``$OPENCODE_DB`` when set, else
``$XDG_DATA_HOME/opencode/opencode.db``, else ``~/.local/share/opencode/opencode.db``.

A session is named by its id (``ses_`` then 26 letters and digits), found in that
database, or by ``DB#ses_…`` for a database anywhere; a database path alone lists its
sessions, like a folder. The picker shows top-level sessions (newest first, with
title, time and message count); a sub-agent's child session (``parent_id`` set) is
listed under its parent, not beside it. Archived sessions are left out unless asked.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kimi_compact_tui.formats.opencode.db import open_snapshot

AGENT_NAME = "opencode"  # the picker's agent name (not opencode's per-session agent)
DB_NAME = "opencode.db"
SQLITE_MAGIC = b"SQLite format 3\x00"
SESSION_ID = re.compile(r"^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$")
SEPARATOR = "#"


@dataclass(frozen=True)
class SessionSummary:
    db: Path
    session_id: str
    title: str
    directory: str
    created: float  # seconds since the epoch
    updated: float
    message_count: int  # message rows
    archived: bool = False
    children: tuple[SessionSummary, ...] = field(default=())


def database_path(env: Mapping[str, str], home: Path) -> Path:
    """Where opencode keeps its database, as opencode finds it."""
    configured = env.get("OPENCODE_DB")
    if configured:
        return Path(configured).expanduser()
    data_home = env.get("XDG_DATA_HOME")
    base = Path(data_home).expanduser() if data_home else home / ".local" / "share"
    return base / "opencode" / DB_NAME


def is_session_id(text: str) -> bool:
    return SESSION_ID.match(text) is not None


def parse_reference(text: str) -> tuple[Path | None, str] | None:
    """``ses_…`` gives (None, id); ``DB#ses_…`` gives (DB, id); anything else None."""
    if is_session_id(text):
        return None, text
    db, sep, key = text.rpartition(SEPARATOR)
    if sep and db and is_session_id(key):
        return Path(db).expanduser(), key
    return None


def looks_like_database(path: Path) -> bool:
    """A regular file starting with SQLite's header (whether opencode's is checked
    when it is opened)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _summaries(conn: sqlite3.Connection, db: Path) -> list[tuple[SessionSummary, str | None]]:
    rows = conn.execute(
        "SELECT s.id, s.parent_id, s.title, s.directory, s.time_created, s.time_updated,"
        " s.time_archived, (SELECT count(*) FROM message m WHERE m.session_id = s.id)"
        " FROM session s ORDER BY s.time_updated DESC, s.id"
    ).fetchall()
    out = []
    for sid, parent, title, directory, created, updated, archived, count in rows:
        summary = SessionSummary(
            db=db,
            session_id=str(sid),
            title=str(title),
            directory=str(directory),
            created=created / 1000.0,
            updated=updated / 1000.0,
            message_count=int(count),
            archived=archived is not None,
        )
        out.append((summary, parent))
    return out


def list_sessions(db: Path, include_archived: bool = False) -> list[SessionSummary]:
    """The database's top-level sessions, newest first, each with its child sessions
    (sub-agents) under it; read in one snapshot."""
    with open_snapshot(db) as conn:
        found = _summaries(conn, Path(db))
    by_parent: dict[str, list[SessionSummary]] = {}
    for summary, parent in found:
        if parent:
            by_parent.setdefault(parent, []).append(summary)

    def nest(summary: SessionSummary) -> SessionSummary:
        children = tuple(nest(c) for c in by_parent.get(summary.session_id, ()))
        return SessionSummary(**{**summary.__dict__, "children": children})

    known = {s.session_id for s, _ in found}
    top = [s for s, parent in found if not parent or parent not in known]
    return [nest(s) for s in top if include_archived or not s.archived]


def find_session(session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
    """The database holding this session id (opencode's own database), or None."""
    db = database_path(env, home)
    if not looks_like_database(db):
        return None
    with open_snapshot(db) as conn:
        row = conn.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone()
    return db if row is not None else None

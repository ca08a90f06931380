"""Where opencode's database is, and its sessions for a picker.

One database holds every session: ``$OPENCODE_DB`` when set, else
``$XDG_DATA_HOME/opencode/opencode.db``, else ``~/.local/share/opencode/opencode.db``.

A session is named by its id (``ses_`` then 26 letters and digits), found in that
database, or by ``DB#ses_…`` for a database anywhere; a database path alone opens its
one session, or lists its sessions, like a folder. The picker lists every session,
newest first, with title, time and message count; a sub-agent's child session
(``parent_id`` set) and an archived one are listed too, marked so
(:data:`CHILD`, :data:`ARCHIVED`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kimi_compact_tui.formats.opencode.db import open_snapshot

DB_NAME = "opencode.db"
SESSION_ID = re.compile(r"^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$")
#: The marks of a session that is not a top-level one of the conversation list.
CHILD = "a sub-agent's session"
ARCHIVED = "archived"


@dataclass(frozen=True)
class SessionSummary:
    db: Path
    session_id: str
    title: str
    directory: str
    created: float  # seconds since the epoch
    updated: float
    message_count: int  # message rows
    parent_id: str | None = None  # the session that started this one (a sub-agent's)
    archived: bool = False

    @property
    def marks(self) -> tuple[str, ...]:
        return ((CHILD,) if self.parent_id else ()) + ((ARCHIVED,) if self.archived else ())


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


def _summaries(conn: sqlite3.Connection, db: Path) -> list[SessionSummary]:
    rows = conn.execute(
        "SELECT s.id, s.parent_id, s.title, s.directory, s.time_created, s.time_updated,"
        " s.time_archived, (SELECT count(*) FROM message m WHERE m.session_id = s.id)"
        " FROM session s ORDER BY s.time_updated DESC, s.id"
    ).fetchall()
    return [
        SessionSummary(
            db=db,
            session_id=str(sid),
            title=str(title),
            directory=str(directory),
            created=created / 1000.0,
            updated=updated / 1000.0,
            message_count=int(count),
            parent_id=str(parent) if parent else None,
            archived=archived is not None,
        )
        for sid, parent, title, directory, created, updated, archived, count in rows
    ]


def list_sessions(db: Path) -> list[SessionSummary]:
    """Every session of the database, newest first (a sub-agent's and an archived
    one marked: :attr:`SessionSummary.marks`); read in one snapshot."""
    with open_snapshot(db) as conn:
        return _summaries(conn, Path(db))


def holds(db: Path, session_id: str) -> bool:
    """Whether the database ``db`` holds the session ``session_id``."""
    with open_snapshot(db) as conn:
        row = conn.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone()
    return row is not None

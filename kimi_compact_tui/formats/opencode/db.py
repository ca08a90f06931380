"""opencode's database, opened read-only as one consistent snapshot, and a session's rows.

The database is in WAL mode: its newest pages may be in ``opencode.db-wal``, so the
main file's bytes alone are not the database, and copying them is not a backup.
:func:`open_snapshot` opens it through SQLite (``formats/sqlite.py``, ``mode=ro``: never
created, never written) and holds one read transaction, so every query sees the same state even
while opencode writes (opencode holds no long lock).

A session's rows load the way opencode loads them: messages ``ORDER BY time_created,
id``, each message's parts (found by ``message_id``) ``ORDER BY id``. ``data`` columns hold the JSON of a message
or part without its ids; a row whose JSON is not an object is refused in one line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import sqlite
from kimi_compact_tui.formats.opencode.schema import check_schema

BUSY_TIMEOUT = 5.0  # seconds a read waits for a lock (opencode holds none for long)


@dataclass(frozen=True)
class PartRow:
    id: str
    message_id: str
    session_id: str
    time_created: int
    time_updated: int
    data: dict[str, Any]
    raw: str  # the data column as stored

    @property
    def type(self) -> str | None:
        kind = self.data.get("type")
        return kind if isinstance(kind, str) else None


@dataclass(frozen=True)
class MessageRow:
    id: str
    session_id: str
    time_created: int
    time_updated: int
    data: dict[str, Any]
    raw: str
    parts: tuple[PartRow, ...]

    @property
    def role(self) -> str | None:
        role = self.data.get("role")
        return role if isinstance(role, str) else None


@dataclass(frozen=True)
class SessionRow:
    id: str
    parent_id: str | None
    title: str
    directory: str
    time_created: int
    time_updated: int
    revert: dict[str, Any] | None = None  # a pending undo (``messageID``, ``partID``)


@dataclass(frozen=True)
class SessionRows:
    """One session as stored: its ``session`` row and its messages with their parts,
    in opencode's load order, and its todo list (``todo`` rows in ``position``
    order: content, status), as opencode shows it."""

    db: Path
    session: SessionRow
    messages: tuple[MessageRow, ...]
    todos: tuple[tuple[str, str], ...] = ()

    def fingerprint(self) -> str:
        """A digest of this session's own rows (ids, times, data): unchanged by any
        write to another session of the same database."""
        digest = hashlib.sha256()
        for m in self.messages:
            for value in (m.id, m.time_created, m.time_updated, m.raw):
                digest.update(f"{value}\x00".encode())
            for p in m.parts:
                for value in (p.id, p.message_id, p.time_created, p.time_updated, p.raw):
                    digest.update(f"{value}\x00".encode())
            digest.update(b"\x01")
        return digest.hexdigest()

    def message(self, message_id: str) -> MessageRow | None:
        return next((m for m in self.messages if m.id == message_id), None)


@contextmanager
def open_snapshot(path: Path, busy_timeout: float = BUSY_TIMEOUT) -> Iterator[sqlite3.Connection]:
    """The database at ``path``, read-only, inside one read transaction (its snapshot
    is taken at the first read: the schema check). Closed on the way out."""
    path = Path(path)
    if not path.is_file():
        raise SessionFormatError(f"{path}: no opencode database there")
    try:
        with sqlite.read_snapshot(path, busy_timeout) as conn:
            check_schema(conn, path)
            yield conn
    except sqlite3.Error as exc:
        raise SessionFormatError(f"{path}: not a readable opencode database: {exc}") from None


def _object(path: Path, table: str, row_id: str, raw: Any) -> dict[str, Any]:
    try:
        data = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise SessionFormatError(
            f"{path}: opencode {table} {row_id}: its data is not a JSON object"
        )
    return data


def session_row(conn: sqlite3.Connection, path: Path, session_id: str) -> SessionRow:
    row = conn.execute(
        "SELECT id, parent_id, title, directory, time_created, time_updated, revert"
        " FROM session WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        raise SessionFormatError(f"{path}: no opencode session {session_id!r} in this database")
    revert = _object(path, "session", str(row[0]), row[6]) if row[6] is not None else None
    return SessionRow(
        str(row[0]), row[1], str(row[2]), str(row[3]), int(row[4]), int(row[5]), revert
    )


def load_session(conn: sqlite3.Connection, path: Path, session_id: str) -> SessionRows:
    """A session's rows, in opencode's load order, read inside the open snapshot."""
    session = session_row(conn, path, session_id)
    parts: dict[str, list[PartRow]] = {}
    for pid, mid, sid, created, updated, raw in conn.execute(
        "SELECT id, message_id, session_id, time_created, time_updated, data FROM part"
        " WHERE message_id IN (SELECT id FROM message WHERE session_id = ?)"
        " ORDER BY message_id, id",
        (session_id,),
    ):
        part = PartRow(
            str(pid), str(mid), str(sid), int(created), int(updated),
            _object(path, "part", str(pid), raw), str(raw),
        )  # fmt: skip
        parts.setdefault(part.message_id, []).append(part)
    messages = []
    for mid, sid, created, updated, raw in conn.execute(
        "SELECT id, session_id, time_created, time_updated, data FROM message"
        " WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ):
        data = _object(path, "message", str(mid), raw)
        messages.append(
            MessageRow(
                str(mid), str(sid), int(created), int(updated), data, str(raw),
                tuple(parts.get(str(mid), ())),
            )  # fmt: skip
        )
    return SessionRows(Path(path), session, tuple(messages), session_todos(conn, session_id))


def session_todos(conn: sqlite3.Connection, session_id: str) -> tuple[tuple[str, str], ...]:
    """The session's todo list as opencode shows it: ``(content, status)`` of its
    ``todo`` rows in ``position`` order (none when the schema has no such table)."""
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'todo'"
    ).fetchone():
        rows = conn.execute(
            "SELECT content, status FROM todo WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return tuple((str(c), str(s)) for c, s in rows if isinstance(c, str) and c.strip())
    return ()


def read_session(path: Path, session_id: str) -> SessionRows:
    """Open the database, check its schema and load one session, in one snapshot."""
    with open_snapshot(path) as conn:
        return load_session(conn, Path(path), session_id)

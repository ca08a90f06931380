"""The base of a format kept as rows of a SQLite database holding many sessions.

A session of such a format is named ``DB#KEY`` (:class:`formats.storage.SessionRef`
with a key): the database file and the session's id in it. A database named alone
opens its one session, or is one line listing the sessions it holds, as a folder
of sessions is. :class:`DatabaseFormat` brings, from a few declarations of the
subclass:

- recognition by the tables the agent's database has (:attr:`DatabaseFormat.tables`);
- finding: where the agent keeps its database (:meth:`~DatabaseFormat.database`),
  its sessions for the picker (:meth:`~DatabaseFormat.sessions`, each a
  :class:`Listed`), a session by its id, a database named alone;
- reading: one read snapshot, in which the subclass reads the session's rows
  (:meth:`~DatabaseFormat.read`) and exports them to the bytes the fingerprint,
  the restore points and the conflict check are of.

There is no ``parse``: a database is not a file of bytes. The subclass declares
its write strategy, a :class:`formats.sqlite.SqliteTransactional` on its schema.
opencode (``formats/opencode/``) is the worked example.
"""

from __future__ import annotations

import re
import sqlite3
import time
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats import sqlite
from kimi_compact_tui.formats.base import Session, SessionFormat, SessionInfo
from kimi_compact_tui.formats.storage import KEY_MARK, Fingerprint, SessionRef
from kimi_compact_tui.formats.strategies import fingerprint_of
from kimi_compact_tui.sanitize import one_line

#: Sessions named in the one line a database named alone gives.
LISTED = 5


@dataclass(frozen=True)
class Listed:
    """One session of a database, for the picker and the listing."""

    session_id: str
    title: str
    directory: str
    updated: float  # seconds since the epoch
    message_count: int
    marks: tuple[str, ...] = ()  # the agent's own marks, for people ("archived", ...)


def looks_like_database(path: Path) -> bool:
    """A file starting with SQLite's header (whose tables say whose it is)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(sqlite.SQLITE_MAGIC)) == sqlite.SQLITE_MAGIC
    except OSError:
        return False


def _a(label: str) -> str:
    return f"an {label}" if label[:1].lower() in "aeiou" else f"a {label}"


class DatabaseFormat(SessionFormat):
    """Sessions kept as rows of one SQLite database (see the module docstring)."""

    #: The tables the agent's database has: a SQLite file with all of them is its.
    tables: ClassVar[tuple[str, ...]]
    #: What a session id of this agent looks like (an id that does not is not
    #: looked up in the database); None: any text.
    id_pattern: ClassVar[re.Pattern[str] | None] = None

    # --- what the subclass declares -------------------------------------------------
    @abstractmethod
    def database(self, env: Mapping[str, str], home: Path) -> Path:
        """Where the agent keeps its database on this machine."""

    @abstractmethod
    def sessions(self, db: Path) -> list[Listed]:
        """The sessions the picker lists of the database ``db``, newest first
        (raises SessionFormatError in one line when it cannot be read)."""

    @abstractmethod
    def read(self, conn: sqlite3.Connection, ref: SessionRef) -> tuple[Session, bytes]:
        """The session ``ref`` names, read in the open read snapshot ``conn``,
        and its own rows exported (the bytes its write strategy exports)."""

    def holds(self, db: Path, key: str) -> bool:
        """Whether the database ``db`` holds the session ``key`` (default: one
        the picker lists)."""
        return any(s.session_id == key for s in self.sessions(db))

    # --- finding ----------------------------------------------------------------------
    def recognise(self, path: Path, head: bytes) -> bool:
        """SQLite's header and the agent's tables."""
        if not head.startswith(sqlite.SQLITE_MAGIC):
            return False
        found = sqlite.tables(path)
        return found is not None and all(t in found for t in self.tables)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [self.database(env, home)]

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        db = self.database(env, home)
        if not looks_like_database(db):
            return []
        try:
            found = self.sessions(db)
        except SessionFormatError as exc:
            return [SessionInfo(SessionRef(db), self.name, title=db.name, error=str(exc))]
        return [
            SessionInfo(
                SessionRef(db, s.session_id),
                self.name,
                title=s.title,
                work_dir=s.directory,
                updated=s.updated,
                last_record=s.updated,
                message_count=s.message_count,
                session_id=s.session_id,
                marks=s.marks,
            )
            for s in found
        ]

    def find_session(
        self, session_id: str, env: Mapping[str, str], home: Path
    ) -> SessionRef | None:
        """``DB#ID`` in the agent's own database, for an id it holds."""
        if self.id_pattern is not None and not self.id_pattern.match(session_id):
            return None
        db = self.database(env, home)
        if not looks_like_database(db):
            return None
        try:
            return SessionRef(db, session_id) if self.holds(db, session_id) else None
        except SessionFormatError:
            return None

    def only_session(self, path: Path) -> SessionRef | None:
        """A database named alone: the one session it holds (or the one the
        agent marks nothing of: not a sub-agent's, not archived), else the list."""
        found = self.sessions(path)
        plain = [s for s in found if not s.marks]
        if len(found) == 1 or len(plain) == 1:
            return SessionRef(path, (found if len(found) == 1 else plain)[0].session_id)
        raise SessionFormatError(self.listing(path, found))

    def listing(self, db: Path, found: list[Listed]) -> str:
        """Why a database alone is not one session: the sessions it holds."""
        if not found:
            return f"{db}: {_a(self.label)} holding no session"
        shown = []
        for s in found[:LISTED]:
            details = [
                self.agent or self.name,
                time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
            ]
            if s.title:
                details.append(repr(one_line(s.title, 40)))
            shown.append(f"{s.session_id} ({', '.join(details)})")
        more = f", and {len(found) - LISTED:,} more" if len(found) > LISTED else ""
        return (
            f"{db}: {_a(self.label)} of {len(found):,} sessions, not one: {'; '.join(shown)}{more}; "
            f"name one as DB#ID (e.g. kimi-compact-tui plan {db}{KEY_MARK}{found[0].session_id})"
        )

    def describe(self, path: Path) -> SessionInfo:
        return SessionInfo(SessionRef(path), self.name, title=f"{path.name} ({_a(self.label)})")

    # --- reading ----------------------------------------------------------------------
    def read_session(self, ref: SessionRef, hashed: bool = True) -> tuple[Session, Fingerprint]:
        """The session ``ref`` names and the fingerprint of its own rows, read
        in one snapshot."""
        if ref.key is None:
            only = self.only_session(ref.path)
            assert only is not None
            ref = only
        if not ref.path.is_file():
            raise SessionFormatError(f"{ref.path}: no {self.label} there")
        try:
            with sqlite.read_snapshot(ref.path) as conn:
                session, data = self.read(conn, ref)
        except sqlite3.Error as exc:
            raise SessionFormatError(f"{ref.path}: not a readable {self.label}: {exc}") from None
        return session, fingerprint_of(data)

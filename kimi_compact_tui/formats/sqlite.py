"""SQLite for formats: the one way a database file is named to SQLite
(:func:`uri`), a read snapshot (:func:`read_snapshot`), and the transactional
strategy on SQLite, for formats kept in a database.

A database in WAL mode is more than its main file (``-wal`` and ``-shm`` lie
beside it), so nothing here copies files: a session's content is its own
rows, read and written through SQLite. A write takes the write lock at once
(``BEGIN IMMEDIATE``, waiting up to :attr:`SqliteTransactional.busy_seconds`
for the agent's own transaction to end), so the re-check of the rows and the
write are one atomic step. A format subclasses :class:`SqliteTransactional`
with its schema (``export``, ``replace_rows``, ``write_rows``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from kimi_compact_tui.formats.storage import SQLITE_MAGIC, SessionRef
from kimi_compact_tui.formats.strategies import Transactional

__all__ = ["SQLITE_MAGIC", "SqliteTransactional", "connect", "read_snapshot", "tables", "uri"]


def uri(path: Path, mode: str = "ro") -> str:
    """The URI SQLite opens the database at ``path`` by (absolute, quoted), in
    ``mode``: "ro" (read only) or "rw" (read and write); never "rwc": a
    database is never created by opening it."""
    return f"{Path(os.path.abspath(path)).as_uri()}?mode={mode}"


def connect(path: Path, mode: str = "ro", timeout: float = 5.0) -> sqlite3.Connection:
    """A connection to the database at ``path`` (autocommit: transactions are
    begun explicitly), waiting up to ``timeout`` seconds for a lock."""
    conn = sqlite3.connect(uri(path, mode), uri=True, timeout=timeout, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


@contextmanager
def read_snapshot(path: Path, timeout: float = 5.0) -> Iterator[sqlite3.Connection]:
    """The database at ``path``, read-only, inside one read transaction (every
    query sees the same state while the agent writes). Rolled back and closed
    on the way out; ``sqlite3.Error`` when it cannot be opened."""
    conn = connect(path, "ro", timeout)
    try:
        conn.execute("BEGIN")
        yield conn
    finally:
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            conn.close()


def tables(path: Path) -> set[str] | None:
    """The names of the tables of the database at ``path``, or None when it is
    no database SQLite can read."""
    try:
        with read_snapshot(path, timeout=1.0) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            return {str(row[0]) for row in rows}
    except (OSError, ValueError, sqlite3.Error):
        return None


class SqliteTransactional(Transactional):
    """:class:`Transactional` on a SQLite database file."""

    errors: ClassVar[tuple[type[Exception], ...]] = (sqlite3.Error,)
    #: How long a write waits for another writer's transaction to end.
    busy_seconds: ClassVar[float] = 5.0

    def connect(self, ref: SessionRef) -> sqlite3.Connection:
        """A connection to the database holding ``ref`` (never creating one)."""
        return connect(ref.path, "rw", self.busy_seconds)

    @contextmanager
    def transaction(self, ref: SessionRef, write: bool = True) -> Iterator[sqlite3.Connection]:
        conn = self.connect(ref)
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

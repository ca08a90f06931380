"""The transactional strategy on SQLite, for formats kept in a database.

A database in WAL mode is more than its main file (``-wal`` and ``-shm`` lie
beside it), so nothing here copies files: a session's content is its own
rows, read and written through SQLite. A write takes the write lock at once
(``BEGIN IMMEDIATE``, waiting up to :attr:`SqliteTransactional.busy_seconds`
for the agent's own transaction to end), so the re-check of the rows and the
write are one atomic step. A format subclasses :class:`SqliteTransactional`
with its schema (``export``, ``replace_rows``, ``write_rows``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.formats.strategies import Transactional


class SqliteTransactional(Transactional):
    """:class:`Transactional` on a SQLite database file."""

    errors: ClassVar[tuple[type[Exception], ...]] = (sqlite3.Error,)
    #: How long a write waits for another writer's transaction to end.
    busy_seconds: ClassVar[float] = 5.0

    def connect(self, ref: SessionRef) -> sqlite3.Connection:
        """A connection to the database holding ``ref`` (never creating one)."""
        uri = ref.path.resolve().as_uri() + "?mode=rw"
        conn = sqlite3.connect(uri, uri=True, timeout=self.busy_seconds, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_seconds * 1000)}")
        return conn

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

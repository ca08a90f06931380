"""What Codex keeps beside a rollout: its writer lock and its UI projection.

Facts (Codex 0.171.0, checked by running it; ``tests/agents/test_codex_projection.py``):

- **The writer lock.** While a Codex process has a session open it holds an
  ``flock`` on ``$CODEX_HOME/thread-writer-locks/<session id>.lock``, and it
  deletes the file when it exits (a killed Codex leaves it, unlocked). A
  held lock means Codex is running on this session now.
- **The UI projection.** ``$CODEX_HOME/thread_history_1.sqlite`` keeps, per
  session, the turns and items Codex shows in its UI (``thread_turns``,
  ``thread_items``, ``thread_realtime_items``) and how far into the rollout it
  has read them (``thread_history_projection_state``:
  ``next_rollout_byte_offset``, ``next_rollout_ordinal``). At each start Codex
  reads the rollout on from that offset; it never re-reads the bytes before.
  The model history Codex resumes is read from the rollout, never from here.
- So when a restore replaces bytes the projection has already read (a forced
  restore after Codex added turns, a restore point picked by name, an undo
  after Codex read our record), the projection keeps showing the removed
  turns and skips Codex's next turns until the file grows past the old
  offset, then reads on from the middle of a record: those turns never appear
  in Codex's UI.
- With no rows for the session in those four tables, Codex rebuilds its
  projection from the start of the rollout at its next start, exactly
  (deleting only the ``projection_state`` row keeps the removed turns).

:func:`reset_projection` forgets the session's projection (one transaction,
only the known schema, only while no Codex holds the session's writer lock),
so that Codex rebuilds it from the restored rollout.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from kimi_compact_tui.formats import sqlite
from kimi_compact_tui.formats.codex.discover import ROLLOUT_NAME

PROJECTION_DB = "thread_history_1.sqlite"
STATE_TABLE = "thread_history_projection_state"
# Every table of the projection that holds rows per session (the state table first).
TABLES = (STATE_TABLE, "thread_turns", "thread_items", "thread_realtime_items")
LOCK_FOLDER = "thread-writer-locks"
BUSY_TIMEOUT = 2.0  # seconds to wait for Codex's database (it is in WAL mode)


def codex_home_of(rollout: Path) -> Path | None:
    """``$CODEX_HOME`` of a rollout at ``sessions/YYYY/MM/DD/`` or
    ``archived_sessions/``, or None for a rollout anywhere else."""
    if rollout.parent.name == "archived_sessions":
        return rollout.parent.parent
    parents = rollout.parents
    if len(parents) > 4 and parents[3].name == "sessions":
        return parents[4]
    return None


def session_id_of(rollout: Path) -> str | None:
    match = ROLLOUT_NAME.match(rollout.name)
    return match.group(1) if match else None


@contextlib.contextmanager
def writer_lock(rollout: Path) -> Iterator[bool]:
    """Holds Codex's writer lock of this rollout's session for the block when
    it can. Yields False when a Codex process holds it (Codex is running on
    this session), True otherwise (also when there is no lock file: no Codex
    has the session open; none is created)."""
    home, sid = codex_home_of(rollout), session_id_of(rollout)
    if home is None or sid is None:
        yield True
        return
    try:
        fd = os.open(home / LOCK_FOLDER / f"{sid}.lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            yield False
            return
        yield True
    finally:
        os.close(fd)  # also releases the lock


def codex_is_running(rollout: Path) -> bool:
    """True while a Codex process holds this rollout's session open."""
    with writer_lock(rollout) as free:
        return not free


def unchanged_prefix(before: bytes, after: bytes) -> int:
    """How many leading bytes ``before`` and ``after`` share."""
    n = min(len(before), len(after))
    if before[:n] == after[:n]:
        return n
    low, high = 0, n  # the shared prefix is at least low and less than high
    while high - low > 1:
        mid = (low + high) // 2
        if before[:mid] == after[:mid]:
            low = mid
        else:
            high = mid
    return low


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in con.execute(f'pragma table_info("{table}")')}


def _known_tables(con: sqlite3.Connection) -> list[str] | None:
    """The projection tables present, or None when the schema is not the one
    Codex 0.171 writes (then nothing is changed)."""
    names = {str(r[0]) for r in con.execute("select name from sqlite_master where type='table'")}
    present = [t for t in TABLES if t in names]
    if STATE_TABLE not in present or "next_rollout_byte_offset" not in _columns(con, STATE_TABLE):
        return None
    if any("thread_id" not in _columns(con, t) for t in present):
        return None
    return present


def reset_projection(rollout: Path, kept: int) -> str | None:
    """Forget Codex's UI projection of this rollout's session when it has read
    past its first ``kept`` bytes (the bytes a restore left as they were), so
    that Codex rebuilds it from the rollout at its next start. Returns None
    when that is done or not needed, else one line saying why it was not done
    (the restore itself stands: only Codex's UI history may be stale)."""
    home, sid = codex_home_of(rollout), session_id_of(rollout)
    if home is None or sid is None:
        return None
    db = home / PROJECTION_DB
    if not db.is_file():
        return None
    stale = (
        f"{db}: Codex's UI history of session {sid} may still show what the restore "
        "removed (the history Codex resumes is the rollout's, unaffected)"
    )
    with writer_lock(rollout) as free:
        if not free:
            return f"{stale}: Codex is running on this session, so it was left alone"
        try:
            return _reset(db, sid, kept, stale)
        except sqlite3.Error as exc:
            return f"{stale}: not reset ({exc})"


def _reset(db: Path, sid: str, kept: int, stale: str) -> str | None:
    con = sqlite3.connect(sqlite.uri(db, "rw"), uri=True, timeout=BUSY_TIMEOUT)
    try:
        con.isolation_level = None  # explicit transactions
        con.execute("begin immediate")
        try:
            tables = _known_tables(con)
            if tables is None:
                con.execute("rollback")
                return f"{stale}: its tables are not the ones Codex 0.171 writes, so not reset"
            row = con.execute(
                f"select next_rollout_byte_offset from {STATE_TABLE} where thread_id = ?", (sid,)
            ).fetchone()
            if row is None or not isinstance(row[0], int) or row[0] <= kept:
                con.execute("rollback")
                return None
            for table in tables:
                con.execute(f'delete from "{table}" where thread_id = ?', (sid,))
            con.execute("commit")
        except BaseException:
            if con.in_transaction:
                con.execute("rollback")
            raise
    finally:
        con.close()
    return None


def after_restore(rollout: Path, before: bytes | None, after: bytes) -> list[str]:
    """Codex's side of a restore that replaced ``before`` (None: no file) with
    ``after``: its UI projection is reset when it read past the bytes that
    stayed the same. Returns the lines to show when that could not be done.
    The store calls it through the format's ``after_restore`` hook."""
    kept = 0 if before is None else unchanged_prefix(before, after)
    warning = reset_projection(rollout, kept)
    return [] if warning is None else [warning]

"""opencode's rows as the transactional strategy's content: one session's own rows.

A session's content (what is fingerprinted, kept as a restore point and put back) is
its ``message`` rows with their ``part`` rows, as stored, exported to canonical JSON
(:func:`export_bytes`). Nothing else of the database is in it: not the ``session``
row, not the ``event`` log, not another session's rows.

The write (:meth:`OpencodeRows.write_rows`) runs inside the strategy's ``BEGIN
IMMEDIATE`` transaction, after the strategy checked that the session's rows are
exactly as loaded: it checks the schema again, refuses a session with a pending undo
(``revert``) or a compaction of opencode's own under way (``time_compacting``), and
inserts the two rows of the compaction (``rows.build_compaction``, built from the
loaded rows when the summary was drafted). No ``event`` row is written: opencode
loads messages from the ``message`` and ``part`` tables and never rebuilds them from
its event log (checked with opencode 1.18.33: its resume reads rows fresh on each
prompt).

Both bump the ``session`` row's ``time_updated`` (:func:`touch`), as opencode does for
a change of its own, so its session list shows the session as changed.

Undo and restore replace the session's message and part rows with a restore
point's (:meth:`OpencodeRows.replace_rows`); the store refuses an undo once opencode
wrote after us (the rows are no longer those we left), unless forced.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.opencode.db import (
    MessageRow,
    PartRow,
    SessionRow,
    SessionRows,
    load_session,
)
from kimi_compact_tui.formats.opencode.history import History, resume_history
from kimi_compact_tui.formats.opencode.rows import (
    MESSAGE_COLUMNS,
    PART_COLUMNS,
    CompactionRows,
    export_rows,
)
from kimi_compact_tui.formats.opencode.schema import check_schema
from kimi_compact_tui.formats.sqlite import SqliteTransactional
from kimi_compact_tui.formats.storage import SessionRef


@dataclass(frozen=True)
class OpencodeState:
    """A loaded session: its rows, what opencode sends of them, and whether opencode
    is compacting it now (``time_compacting``)."""

    rows: SessionRows
    history: History
    compacting: bool = False


@dataclass(frozen=True)
class OpencodeCompacted:
    """The compacted session's state: the rows to insert, or why none can be."""

    loaded: OpencodeState
    rows: CompactionRows | None
    refusal: str | None = None


def export_bytes(rows: SessionRows) -> bytes:
    """The session's own rows as bytes: the same bytes for the same rows."""
    text = json.dumps(export_rows(rows), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.encode("utf-8")


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not an integer: {value!r}")
    return value


def rows_from_export(data: bytes, ref: SessionRef) -> SessionRows:
    """The rows an export holds (SessionFormatError in one line when it holds none)."""
    try:
        doc = json.loads(data.decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("session_id") != ref.key:
            raise ValueError(f"not the rows of {ref.key}")
        messages = []
        for m in doc["messages"]:
            parts = tuple(
                PartRow(
                    str(p["id"]), str(p["message_id"]), str(p["session_id"]),
                    _int(p["time_created"]), _int(p["time_updated"]),
                    json.loads(p["data"]), str(p["data"]),
                )  # fmt: skip
                for p in m["parts"]
            )
            messages.append(
                MessageRow(
                    str(m["id"]), str(m["session_id"]),
                    _int(m["time_created"]), _int(m["time_updated"]),
                    json.loads(m["data"]), str(m["data"]), parts,
                )  # fmt: skip
            )
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise SessionFormatError(f"{ref}: not an export of opencode rows ({exc})") from None
    session = SessionRow(str(ref.key), None, "", "", 0, 0)
    return SessionRows(ref.path, session, tuple(messages))


def with_rows(rows: SessionRows, new: CompactionRows) -> SessionRows:
    """``rows`` with the compaction's rows appended (what opencode would load)."""
    messages = list(rows.messages)
    for m in new.messages:
        parts = tuple(
            PartRow(
                str(p["id"]), str(p["message_id"]), str(p["session_id"]),
                int(p["time_created"]), int(p["time_updated"]), json.loads(p["data"]),
                str(p["data"]),
            )  # fmt: skip
            for p in new.parts
            if p["message_id"] == m["id"]
        )
        messages.append(
            MessageRow(
                str(m["id"]), str(m["session_id"]), int(m["time_created"]),
                int(m["time_updated"]), json.loads(m["data"]), str(m["data"]), parts,
            )  # fmt: skip
        )
    messages.sort(key=lambda m: (m.time_created, m.id))
    return SessionRows(rows.db, rows.session, tuple(messages), rows.todos)


def touch(tx: sqlite3.Connection, session_id: str, when_ms: int) -> None:
    """Mark the session changed at ``when_ms``, and in any case later than it was
    last changed, as opencode does for a change of its own: its session list is
    ordered by it. The ``session`` row is not part of the session's exported
    content."""
    tx.execute(
        "UPDATE session SET time_updated = max(time_updated + 1, ?) WHERE id = ?",
        (when_ms, session_id),
    )


def compacting(conn: sqlite3.Connection, session_id: str) -> bool:
    row = conn.execute("SELECT time_compacting FROM session WHERE id = ?", (session_id,)).fetchone()
    return row is not None and row[0] is not None


def busy_refusal(rows: SessionRows, is_compacting: bool) -> str | None:
    """Why opencode's own state forbids a write now, or None."""
    if rows.session.revert:
        return (
            "opencode has an undo pending on this session (its revert is set); "
            "send a prompt or cancel the undo in opencode first"
        )
    if is_compacting:
        return "opencode is compacting this session now; wait until it has finished"
    last = rows.messages[-1] if rows.messages else None
    if last is not None and last.role == "assistant":
        times = last.data.get("time")
        done = isinstance(times, dict) and times.get("completed") is not None
        if not done and not last.data.get("error"):
            return "the session's last reply is unfinished (opencode may be answering now)"
    return None


class OpencodeRows(SqliteTransactional):
    """The transactional strategy on opencode's schema."""

    def _key(self, ref: SessionRef) -> str:
        if ref.key is None:
            raise ApplyError(f"{ref}: an opencode database holds many sessions; name one: DB#ses_…")
        return ref.key

    def read_rows(self, tx: sqlite3.Connection, ref: SessionRef) -> SessionRows:
        try:
            return load_session(tx, ref.path, self._key(ref))
        except SessionFormatError as exc:
            raise ApplyError(str(exc)) from None

    def export_rows(self, rows: SessionRows) -> bytes:
        return export_bytes(rows)

    def replace_rows(self, tx: sqlite3.Connection, ref: SessionRef, data: bytes) -> None:
        key = self._key(ref)
        try:
            rows = rows_from_export(data, ref)
            now = load_session(tx, ref.path, key)
        except SessionFormatError as exc:
            raise ApplyError(str(exc)) from None
        # What opencode is doing now holds whatever rows are put back: an undo it
        # has pending or a compaction under way would point at rows that are gone.
        busy = busy_refusal(now, compacting(tx, key))
        if busy is not None:
            raise ApplyError(f"{ref}: not restored: {busy}; nothing was changed")
        tx.execute(
            "DELETE FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = ?)",
            (key,),
        )
        tx.execute("DELETE FROM message WHERE session_id = ?", (key,))
        tx.executemany(
            f"INSERT INTO message ({', '.join(MESSAGE_COLUMNS)}) VALUES (?, ?, ?, ?, ?)",
            [(m.id, m.session_id, m.time_created, m.time_updated, m.raw) for m in rows.messages],
        )
        tx.executemany(
            f"INSERT INTO part ({', '.join(PART_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (p.id, p.message_id, p.session_id, p.time_created, p.time_updated, p.raw)
                for m in rows.messages
                for p in m.parts
            ],
        )
        touch(tx, key, round(time.time() * 1000))

    def write_rows(
        self, tx: sqlite3.Connection, rows: SessionRows, session: Session, compacted: Session
    ) -> bytes:
        ref = session.ref
        state = compacted.format_state
        if not isinstance(state, OpencodeCompacted) or state.rows is None:
            why = state.refusal if isinstance(state, OpencodeCompacted) else None
            raise ApplyError(f"{ref}: not written: {why or 'not a compacted opencode session'}")
        try:
            check_schema(tx, Path(ref.path))
        except SessionFormatError as exc:
            raise ApplyError(f"{exc}; nothing was written") from None
        busy = busy_refusal(rows, compacting(tx, self._key(ref)))
        if busy is not None:
            raise ApplyError(f"{ref}: not written: {busy}")
        for sql, params in state.rows.statements():
            tx.execute(sql, params)
        newest = max(int(m["time_updated"]) for m in state.rows.messages)
        touch(tx, self._key(ref), newest)
        return export_bytes(with_rows(rows, state.rows))

    def count_messages(self, ref: SessionRef, data: bytes) -> int:
        return len(resume_history(rows_from_export(data, ref)).messages)

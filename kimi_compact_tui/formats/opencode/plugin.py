"""The opencode format: sessions kept as rows of opencode's SQLite database.

A session is named ``DB#ses_…`` (the database and the session's id), or by its id
alone, found in the database opencode itself uses (:func:`.discover.database_path`).
A database named alone is refused in one line listing its sessions, as a folder of
sessions is.

Read: one read snapshot (:mod:`.db`), the messages exactly as opencode sends them on
resume (:mod:`.history`), the fingerprint of the session's own rows exported
(:mod:`.store`). Write: the two rows of opencode's own compaction (:mod:`.rows`),
carrying our summary, with the first kept message row as ``tail_start_id``, inserted
in one transaction after the rows are checked to be as loaded (:class:`.store.
OpencodeRows`). Read back, the compaction is what opencode sends: its framing of the
summary (a user marker with no words), our summary, then the kept messages.

The boundary is a message row: an assistant row holds a reply's tool calls and their
results, so a boundary inside it cannot be written (the tool-call check sees the usual
case, a call cut from its result; a reply of several steps is refused here, naming the
nearest boundary at a row's start). After opencode's own compaction, a boundary inside
the messages that compaction kept is refused as well: opencode would send its older
summary again after them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.compaction.pairs import safe_boundaries
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import Session, SessionFormat, SessionInfo
from kimi_compact_tui.formats.opencode import discover
from kimi_compact_tui.formats.opencode import roles as opencode_roles
from kimi_compact_tui.formats.opencode.db import (
    MessageRow,
    PartRow,
    SessionRows,
    load_session,
    open_snapshot,
)
from kimi_compact_tui.formats.opencode.history import FRAMING_PART, History, resume_history
from kimi_compact_tui.formats.opencode.rows import CompactionRows, build_compaction
from kimi_compact_tui.formats.opencode.store import (
    OpencodeCompacted,
    OpencodeRows,
    OpencodeState,
    busy_refusal,
    compacting,
    export_bytes,
)
from kimi_compact_tui.formats.storage import KEY_MARK, Fingerprint, SessionRef
from kimi_compact_tui.formats.strategies import fingerprint_of
from kimi_compact_tui.model import Message
from kimi_compact_tui.sanitize import one_line

NAME = "opencode"
LISTED = 5
RUNNING_NOTE = (
    "opencode may stay open: it reads the session's rows afresh on each prompt, and a "
    "prompt sent while this writes makes the write refuse (nothing is written)"
)
_TABLES = ("migration", "session", "message", "part")


def framing_message() -> Message:
    """opencode's framing of a summary, as :mod:`.history` reads it back."""
    return Message.make("user", [{"type": FRAMING_PART, "auto": False}], opencode={"framing": True})


def is_framing(message: Message) -> bool:
    marks = message.data.get("opencode")
    return isinstance(marks, dict) and marks.get("framing") is True


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


class OpencodeFormat(SessionFormat):
    name = NAME
    label = "opencode database"
    agent = "opencode"
    storage = OpencodeRows()
    write_notes = (RUNNING_NOTE,)

    # --- finding sessions -----------------------------------------------------------
    def recognise(self, path: Path, head: bytes) -> bool:
        """SQLite's header and opencode's tables (its schema is checked on load,
        so a newer opencode's database is refused in its own words)."""
        if not head.startswith(discover.SQLITE_MAGIC):
            return False
        try:
            uri = path.resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=1.0)
            try:
                found = {
                    str(row[0])
                    for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                }
            finally:
                conn.close()
        except (OSError, ValueError, sqlite3.Error):
            return False
        return all(table in found for table in _TABLES)

    def find_session(
        self, session_id: str, env: Mapping[str, str], home: Path
    ) -> SessionRef | None:
        """``DB#ses_…`` in opencode's own database, for a ``ses_…`` id it holds."""
        if not discover.is_session_id(session_id):
            return None
        try:
            db = discover.find_session(session_id, env, home)
        except SessionFormatError:
            return None
        return None if db is None else SessionRef(db, session_id)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [discover.database_path(env, home)]

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        db = discover.database_path(env, home)
        if not discover.looks_like_database(db):
            return []
        try:
            found = discover.list_sessions(db)
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
            )
            for s in found
        ]

    def describe(self, path: Path) -> SessionInfo:
        return SessionInfo(SessionRef(path), self.name, title=f"{path.name} (an opencode database)")

    def only_session(self, path: Path) -> SessionRef | None:
        """A database named alone: the one session it holds, else the list."""
        found = discover.list_sessions(path)
        if len(found) == 1:
            return SessionRef(path, found[0].session_id)
        raise SessionFormatError(self.listing(path))

    def listing(self, db: Path) -> str:
        """Why a database alone is not one session: the sessions it holds."""
        found = discover.list_sessions(db)
        if not found:
            return f"{db}: an opencode database holding no session"
        shown = []
        for s in found[:LISTED]:
            details = ["opencode", _when(s.updated)]
            if s.title:
                details.append(repr(one_line(s.title, 40)))
            shown.append(f"{s.session_id} ({', '.join(details)})")
        more = f", and {len(found) - LISTED:,} more" if len(found) > LISTED else ""
        what = f"{len(found):,} sessions, not one" if len(found) > 1 else "one session"
        return (
            f"{db}: an opencode database of {what}: {'; '.join(shown)}{more}; name one as "
            f"DB#ID (e.g. kimi-compact-tui plan {db}{KEY_MARK}{found[0].session_id})"
        )

    # --- reading ----------------------------------------------------------------------
    def parse(self, data: bytes, path: Path) -> Session:
        raise SessionFormatError(f"{path}: an opencode database is read through SQLite")

    def read_session(self, ref: SessionRef, hashed: bool = True) -> tuple[Session, Fingerprint]:
        if ref.key is None:
            raise SessionFormatError(self.listing(ref.path))
        with open_snapshot(ref.path) as conn:
            rows = load_session(conn, ref.path, ref.key)
            busy = compacting(conn, ref.key)
        return self.loaded(rows, busy)

    def loaded(self, rows: SessionRows, busy: bool = False) -> tuple[Session, Fingerprint]:
        history = resume_history(rows)
        state = OpencodeState(rows, history, busy)
        ref = SessionRef(rows.db, rows.session.id)
        session = Session(ref, self, list(history.messages), format_state=state)
        return session, fingerprint_of(export_bytes(rows))

    # --- the compaction ---------------------------------------------------------------
    #: opencode's tools, its framing of a summary and the summary itself (bookkeeping).
    roles = opencode_roles.ROLES

    def summary_message(self, summary: str) -> Message:
        """The summary as opencode reads its own summary row back."""
        return Message.make(
            "assistant", [{"type": "text", "text": summary}], opencode={"summary": True}
        )

    def write_refusal(self, session: Session) -> str | None:
        state = session.format_state
        if not isinstance(state, OpencodeState):
            return "not a loaded opencode session"
        return busy_refusal(state.rows, state.compacting)

    def plan_refusal(self, session: Session, plan: CompactionPlan) -> str | None:
        state = session.format_state
        if plan.noop or not isinstance(state, OpencodeState):
            return None
        refusal = boundary_refusal(state.history, plan.boundary)
        if refusal is None:
            return None
        safe = nearest_writable(session, state.history, plan.boundary, plan.leading)
        hint = f"; the nearest boundary that can be written is --up-to {safe}" if safe else ""
        return f"{refusal}{hint}"

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
    ) -> Session:
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        state = session.format_state
        if not isinstance(state, OpencodeState):
            raise SessionFormatError(f"{session.ref}: not a loaded opencode session")
        boundary = plan.boundary
        kept = [session.messages[i] for i in plan.preserved_indices]
        made = [framing_message(), self.summary_message(summary), *kept]
        refusal = boundary_refusal(state.history, boundary)
        rows = None
        if refusal is None:
            tail = state.history.boundary_row(boundary) if boundary < len(session) else None
            rows = build_compaction(state.rows, summary, tail)
            after = resume_history(_with(state.rows, rows)).messages
            if list(after) != made:  # what opencode would send is not the plan's session
                refusal = "opencode would not resume this compaction as planned"
                rows = None
            else:
                made = list(after)
        if refusal is not None:
            safe = nearest_writable(session, state.history, boundary, plan.leading)
            hint = f"; the nearest boundary that can be written is --up-to {safe}" if safe else ""
            refusal = f"{refusal}{hint}"
        new_state = OpencodeCompacted(state, rows, refusal)
        return Session(session.ref, self, made, meta=session.meta, format_state=new_state)


def _with(rows: SessionRows, new: CompactionRows) -> SessionRows:
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
    return SessionRows(rows.db, rows.session, tuple(messages))


def _row_order(history: History) -> dict[str, int]:
    return {m.id: i for i, m in enumerate(history.rows.messages)}


def writable(history: History, boundary: int) -> bool:
    """Whether the kept messages may start at ``boundary``: at the start of a message
    row, and (after a compaction of opencode's own) not inside what it kept."""
    n = len(history.messages)
    if boundary >= n:
        return True
    if history.boundary_row(boundary) is None:
        return False
    if history.compaction_id is None:
        return True
    order = _row_order(history)
    row = history.origins[boundary].message_id
    return order.get(row, -1) >= order.get(history.compaction_id, -1)


def boundary_refusal(history: History, boundary: int) -> str | None:
    """Why a compaction whose kept messages start at ``boundary`` cannot be written."""
    if writable(history, boundary):
        return None
    if history.boundary_row(boundary) is None:
        return (
            f"messages {boundary} and {boundary + 1} are one opencode message row (a reply "
            "and its tool results), kept or compacted together"
        )
    return (
        f"message {boundary + 1} is inside what opencode's earlier compaction kept; "
        "opencode would send its earlier summary again after it"
    )


def nearest_writable(session: Session, history: History, boundary: int, leading: int) -> int | None:
    """The ``--up-to`` nearest ``boundary`` that can be written and splits no tool call."""
    safe = safe_boundaries(session.messages)
    n = len(session.messages)
    for distance in range(n + 1):
        for b in (boundary + distance, boundary - distance):
            if leading < b <= n and safe[b] and writable(history, b):
                return b
    return None


FORMAT = OpencodeFormat()

"""The opencode format: sessions kept as rows of opencode's SQLite database, on
:class:`formats.database.DatabaseFormat` (its worked example).

A session is named ``DB#ses_…`` (the database and the session's id), or by its id
alone, found in the database opencode itself uses (:func:`.discover.database_path`).
A database named alone opens its one session, or is refused in one line listing its
sessions, as a folder of sessions is.

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

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.compaction.pairs import safe_boundaries
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.database import DatabaseFormat, Listed
from kimi_compact_tui.formats.opencode import discover
from kimi_compact_tui.formats.opencode import roles as opencode_roles
from kimi_compact_tui.formats.opencode.db import SessionRows, load_session
from kimi_compact_tui.formats.opencode.history import (
    FRAMING_PART,
    History,
    resume_history,
    with_todo_plan,
    without_todo_plan,
)
from kimi_compact_tui.formats.opencode.rows import build_compaction
from kimi_compact_tui.formats.opencode.schema import check_schema
from kimi_compact_tui.formats.opencode.store import (
    OpencodeCompacted,
    OpencodeRows,
    OpencodeState,
    busy_refusal,
    compacting,
    export_bytes,
    with_rows,
)
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.model import Message

NAME = "opencode"
RUNNING_NOTE = (
    "opencode may stay open: it reads the session's rows afresh on each prompt, and a "
    "prompt sent while this writes makes the write refuse (nothing is written)"
)


def framing_message() -> Message:
    """opencode's framing of a summary, as :mod:`.history` reads it back."""
    return Message.make("user", [{"type": FRAMING_PART, "auto": False}], opencode={"framing": True})


class OpencodeFormat(DatabaseFormat):
    name = NAME
    label = "opencode database"
    agent = "opencode"
    storage = OpencodeRows()
    write_notes = (RUNNING_NOTE,)
    #: opencode's tables (its schema is checked on load, so a newer opencode's
    #: database is refused in its own words).
    tables = ("migration", "session", "message", "part")
    id_pattern = discover.SESSION_ID

    # --- finding sessions -----------------------------------------------------------
    def database(self, env: Mapping[str, str], home: Path) -> Path:
        return discover.database_path(env, home)

    def sessions(self, db: Path) -> list[Listed]:
        return [
            Listed(s.session_id, s.title, s.directory, s.updated, s.message_count, s.marks)
            for s in discover.list_sessions(db)
        ]

    def holds(self, db: Path, key: str) -> bool:
        return discover.holds(db, key)

    # --- reading ----------------------------------------------------------------------
    def read(self, conn: sqlite3.Connection, ref: SessionRef) -> tuple[Session, bytes]:
        check_schema(conn, ref.path)
        key = str(ref.key)
        rows = load_session(conn, ref.path, key)
        return self.loaded(rows, compacting(conn, key))

    def loaded(self, rows: SessionRows, busy: bool = False) -> tuple[Session, bytes]:
        """The session of ``rows`` as opencode resumes it, and its rows exported."""
        history = resume_history(rows)
        state = OpencodeState(rows, history, busy)
        ref = SessionRef(rows.db, rows.session.id)
        messages = list(with_todo_plan(history.messages, rows.todos))
        return Session(ref, self, messages, format_state=state), export_bytes(rows)

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
        kept = [without_todo_plan(session.messages[i]) for i in plan.preserved_indices]
        made = [framing_message(), self.summary_message(summary), *kept]
        refusal = boundary_refusal(state.history, boundary)
        rows = None
        if refusal is None:
            tail = state.history.boundary_row(boundary) if boundary < len(session) else None
            rows = build_compaction(state.rows, summary, tail)
            after = resume_history(with_rows(state.rows, rows)).messages
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

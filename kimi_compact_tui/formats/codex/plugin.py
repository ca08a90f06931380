"""The Codex format: Codex CLI rollouts (``$CODEX_HOME/sessions/…/rollout-….jsonl``).

A thin adapter over the pure core: :mod:`.state` reads a rollout as Codex
resumes it, :mod:`.records` builds the one record a compaction appends. The
session's ``format_state`` is a :class:`~.state.CodexState`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.base import (
    Session,
    SessionInfo,
    SessionMeta,
    state_of,
)
from kimi_compact_tui.formats.codex import discover as discovery
from kimi_compact_tui.formats.codex import roles
from kimi_compact_tui.formats.codex.history import HistoryItem
from kimi_compact_tui.formats.codex.messages import map_history
from kimi_compact_tui.formats.codex.rollout import RECORD_TYPES, TAIL_NEWLINE, first_record
from kimi_compact_tui.formats.codex.state import CodexState, load
from kimi_compact_tui.formats.journal import Compaction, JournalFormat
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.model import Message

NAME = "codex"
CLOSE_NOTE = (
    "Codex must not be running on this session: it keeps the history in memory and "
    "would not see this compaction (close it first)"
)
# A first line too long for the head: its start says whether it is a Codex record.
_LONG_FIRST = rb'^\{"timestamp":"[^"]{10,40}",(?:"ordinal":\d+,)?"type":"session_meta","payload":\{'


@functools.cache
def _long_first() -> re.Pattern[bytes]:
    """:data:`_LONG_FIRST`, compiled when a head is one long line (rare; the
    compile costs more than the rest of Codex's sniffing at start-up)."""
    return re.compile(_LONG_FIRST)


def parse_rollout(data: bytes, path: Path) -> Session:
    read = load(data, path)
    return Session(SessionRef(path), FORMAT, read.messages, read.warnings, read.meta, read.state)


def write_refusal(session: Session) -> str | None:
    """Why a compaction cannot be appended to this loaded session, or None
    (asked before any request and again just before the write)."""
    state = session.format_state
    if not isinstance(state, CodexState):
        return "not a loaded Codex session"
    if state.open_turn:
        return (
            f"the session ends mid-turn ({state.open_turn}); let Codex finish the turn "
            "(or run one more turn), then compact"
        )
    from kimi_compact_tui.formats.codex.projection import codex_is_running  # Codex's lock

    if session.path is not None and codex_is_running(Path(session.path)):
        return (
            "Codex is running on this session (it holds the session's writer lock) and "
            "would not see the compaction; close it first"
        )
    return None


class CodexFormat(JournalFormat, state=CodexState, finder=discovery.FINDER, roles=roles.ROLES):
    name = NAME
    label = "Codex rollout"
    agent = "Codex"

    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog

    def write_refusal(self, session: Session) -> str | None:
        return write_refusal(session)

    def after_restore(self, path: Path, replaced: bytes | None, restored: bytes) -> list[str]:
        """Codex's UI projection of the session is forgotten when it had read
        past the bytes the restore kept: Codex rebuilds it from the rollout."""
        from kimi_compact_tui.formats.codex import projection  # Codex's UI history: on restore

        return projection.after_restore(path, replaced, restored)

    def recognise(self, path: Path, head: bytes) -> bool:
        record = first_record(head)
        if record is None:
            return b"\n" not in head and _long_first().match(head) is not None
        return (
            record.get("type") in RECORD_TYPES
            and type(record.get("payload")) is dict
            and type(record.get("timestamp")) is str
        )

    def describe(self, path: Path) -> SessionInfo:
        return discovery.describe(path, self.name, self.parse)

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discovery.find_session(session_id, env, home)

    def parse(self, data: bytes, path: Path) -> Session:
        return parse_rollout(data, path)

    def summary_message(self, summary: str) -> Message:
        from kimi_compact_tui.formats.codex import records  # the writer: when writing

        item = records.summary_item(build_compact_summary_text(summary))
        return map_history((HistoryItem(item, 0),)).messages[0]

    def compaction(self, c: Compaction) -> Session:
        from kimi_compact_tui.formats.codex import records  # the writer: when writing

        session, plan = c.session, c.plan
        state = state_of(session, CodexState)
        text = build_compact_summary_text(c.summary)
        start = state.starts[plan.boundary] if plan.boundary < len(state.starts) else None
        # A prompt Codex never sent stays unsent: it is not written (its UI event
        # stays in the rollout, before the record).
        kept = [] if start is None else [h for h in state.history[start:] if not h.unsent]
        record = records.compacted_record(state, text, [h.item for h in kept], c.now)
        appended = records.encode(record, state)
        items = (HistoryItem(record["payload"]["replacement_history"][0], 0), *kept)
        mapped = map_history(items)
        new_state = replace(
            state,
            history=items,
            starts=mapped.starts,
            prefix=mapped.prefix,
            max_ordinal=record.get("ordinal", state.max_ordinal),
            last_timestamp=record["timestamp"],
            tail=TAIL_NEWLINE,
            open_turn=None,
            compactions=state.compactions + 1,
            appended=appended,
        )
        # Codex's token count is of the history before: none is known after.
        meta = SessionMeta(system_prompt=session.meta.system_prompt)
        return Session(session.ref, self, mapped.messages, meta=meta, format_state=new_state)


FORMAT = CodexFormat()

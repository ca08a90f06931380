"""The Codex format: Codex CLI rollouts (``$CODEX_HOME/sessions/…/rollout-….jsonl``).

A thin adapter over the pure core: :mod:`.state` reads a rollout as Codex
resumes it, :mod:`.records` builds the one record a compaction appends.
``Session.extra["state"]`` holds the :class:`~.state.CodexState`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import SessionInfo, WriteOp
from kimi_compact_tui.formats.codex import discover as discovery
from kimi_compact_tui.formats.codex import records
from kimi_compact_tui.formats.codex.history import HistoryItem
from kimi_compact_tui.formats.codex.messages import map_history
from kimi_compact_tui.formats.codex.rollout import RECORD_TYPES, TAIL_NEWLINE, first_record
from kimi_compact_tui.formats.codex.state import CodexState, load
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message, Session

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.plan import CompactionPlan

FORMAT = "codex"
CLOSE_NOTE = (
    "Codex must not be running on this session: it keeps the history in memory and "
    "would not see this compaction (close it first)"
)
# A first line too long for the head: its start says whether it is a Codex record.
_LONG_FIRST = re.compile(
    rb'^\{"timestamp":"[^"]{10,40}",(?:"ordinal":\d+,)?"type":"session_meta","payload":\{'
)


def parse_rollout(data: bytes, path: Path) -> Session:
    state, messages = load(data, path)
    return Session(
        path=path,
        format=FORMAT,
        messages=messages,
        system_prompt=state.base_instructions,
        recorded_tokens=state.recorded_tokens,
        extra={"state": state},
        warnings=list(state.warnings),
    )


def state_of(session: Session) -> CodexState | None:
    state = session.extra.get("state")
    return state if session.format == FORMAT and isinstance(state, CodexState) else None


def write_refusal(session: Session) -> str | None:
    """Why a compaction cannot be appended to this loaded session, or None."""
    state = state_of(session)
    if state is None:
        return "not a loaded Codex session"
    if state.open_turn:
        return (
            f"the session ends mid-turn ({state.open_turn}); let Codex finish the turn "
            "(or run one more turn), then compact"
        )
    return None


class CodexFormat:
    name = FORMAT
    label = "Codex rollout"
    agent = "Codex"
    write_policy = "append"
    write_notes = (CLOSE_NOTE,)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [discovery.root_of(env, home) / "sessions"]

    def write_refusal(self, session: Session) -> str | None:
        return write_refusal(session)

    def recognise(self, path: Path, head: bytes) -> bool:
        record = first_record(head)
        if record is None:
            return b"\n" not in head and _LONG_FIRST.match(head) is not None
        return (
            record.get("type") in RECORD_TYPES
            and type(record.get("payload")) is dict
            and type(record.get("timestamp")) is str
        )

    def resolve_folder(self, folder: Path) -> Path | None:
        return None  # a Codex session is one file

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return discovery.discover(env, home, self.name, self.parse)

    def describe(self, path: Path) -> SessionInfo:
        return discovery.describe(path, self.name, self.parse)

    def find_session(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discovery.find_session(session_id, env, home)

    def parse(self, data: bytes, path: Path) -> Session:
        with gc_paused():
            return parse_rollout(data, path)

    def dump(self, session: Session) -> bytes:
        state = state_of(session)
        if state is None:
            raise SessionFormatError(
                f"{session.path}: a Codex session is written by appending a record to the "
                "rollout it was read from"
            )
        return state.data + state.appended

    def summary_message(self, summary: str) -> Message:
        item = records.summary_item(build_compact_summary_text(summary))
        return map_history((HistoryItem(item, 0),)).messages[0]

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
        *,
        now: datetime | None = None,
    ) -> Session:
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        state = state_of(session)
        if state is None:
            raise ApplyError(f"{session.path}: not a loaded Codex session")
        if plan.leading:
            raise ApplyError(
                f"{session.path}: the history starts with {plan.leading} system message(s), "
                "which a Codex compaction cannot keep"
            )
        text = build_compact_summary_text(summary)
        start = state.starts[plan.boundary] if plan.boundary < len(state.starts) else None
        kept = [] if start is None else list(state.history[start:])
        record = records.compacted_record(state, text, [h.item for h in kept], now)
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
            recorded_tokens=None,
            appended=appended,
        )
        return Session(
            path=session.path,
            format=FORMAT,
            messages=mapped.messages,
            system_prompt=session.system_prompt,
            recorded_tokens=None,
            extra={"state": new_state},
        )

    def write_op(self, session: Session, compacted: Session, context: Mapping[str, Any]) -> WriteOp:
        refusal = write_refusal(session)
        if refusal:
            raise ApplyError(f"{session.path}: {refusal}")
        state, new = state_of(session), state_of(compacted)
        if state is None or new is None or not new.appended or new.data is not state.data:
            raise ApplyError(f"{session.path}: the compacted session was not built from this one")
        return WriteOp("append", new.appended, [CLOSE_NOTE])

    def rotation_name(self, path: Path, number: int) -> Path:
        raise NotImplementedError("Codex rollouts are appended to, never rotated")

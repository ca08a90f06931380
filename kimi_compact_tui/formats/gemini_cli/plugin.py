"""The gemini-cli format: Gemini CLI sessions (``~/.gemini/tmp/*/chats/session-*.jsonl``).

A thin adapter over the pure core (:mod:`.records`, :mod:`.history`,
:mod:`.convert`, :mod:`.append`, :mod:`.discover`): everything the format keeps
about a loaded session is one :class:`.state.GeminiState`, the session's
``format_state``.

No system message is pinned: the ``<session_context>`` message Gemini CLI sends
first is its own prefix, made fresh on every resume (the one in the file is never
sent).

Write: one ``$set.messages`` record is appended (:mod:`.append`), policy "append";
undo cuts the file back to its loaded length while it still ends with exactly that
record (the store does it from its audit record). Restore points and the audit
log go to a folder beside ``chats/`` (:meth:`GeminiCliFormat.restore_folder`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import (
    Session,
    SessionFormat,
    SessionInfo,
    SessionMeta,
    WriteOp,
    state_of,
)
from kimi_compact_tui.formats.gemini_cli import append, discover, roles
from kimi_compact_tui.formats.gemini_cli.state import GeminiState, read_session, write_refusal
from kimi_compact_tui.model import Message

NAME = "gemini-cli"
CLOSE_NOTE = (
    "Gemini CLI must not be running on this session: it keeps the history in memory "
    "and rewrites it into the file after its next turn, which would undo this "
    "compaction (close it first, then resume the session)"
)


def parse_session(data: bytes, path: Path) -> Session:
    state, messages = read_session(data, path)
    if not state.session_id:
        first = state.warnings[0] if state.warnings else "no header"
        raise SessionFormatError(f"{path}: no Gemini CLI session header in the file ({first})")
    return Session(
        path,
        FORMAT,
        list(messages),
        list(state.warnings),
        SessionMeta(recorded_tokens=state.recorded_tokens),
        state,
    )


def _header(record: object) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


def _loaded_state(session: Session) -> GeminiState | None:
    state = session.format_state
    return state if isinstance(state, GeminiState) else None


class GeminiCliFormat(SessionFormat):
    name = NAME
    label = "Gemini CLI session"
    agent = "Gemini CLI"
    write_policy = "append"
    tools = roles.TOOLS

    def bookkeeping(self, message: Message) -> str | None:
        return roles.bookkeeping(message)

    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog

    # --- finding sessions -----------------------------------------------------------
    def recognise(self, path: Path, head: bytes) -> bool:
        """The first line is Gemini CLI's header (a session id and a project hash),
        or the file is an older one-object ``session-*.json`` session."""
        first = head.lstrip().split(b"\n", 1)[0].rstrip(b"\r")
        try:
            if _header(json.loads(first.decode("utf-8"))):
                return True
        except (ValueError, RecursionError):
            pass
        if discover.is_session_name(path.name) and path.suffix == ".json":
            return b'"sessionId"' in head and b'"projectHash"' in head
        return False

    # resolve_folder: the default (None): a chats folder holds many sessions,
    # opened by file or by id.

    def find_session(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discover.find_session(session_id, env, home, self.name, read_session)

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [discover.tmp_of(env, home)]

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return discover.discover(env, home, self.name, read_session)

    def describe(self, path: Path) -> SessionInfo:
        return discover.describe(path, self.name, read_session)

    # --- reading and writing the file -------------------------------------------------
    def parse(self, data: bytes, path: Path) -> Session:
        return parse_session(data, path)

    def dump(self, session: Session) -> bytes:
        state = _loaded_state(session)
        if state is None:
            raise SessionFormatError(
                f"{session.path}: a Gemini CLI session is written by appending a record to "
                "the file it was read from"
            )
        return state.data + state.appended

    # --- the compaction ---------------------------------------------------------------
    # summary_message: the default (the spec's one-text user message; no
    # acknowledgement after it).

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
        *,
        now: datetime | None = None,
        new_id: Callable[[], object] | None = None,
    ) -> Session:
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        state = state_of(session, GeminiState)
        if plan.leading:
            raise ApplyError(f"{session.path}: a Gemini CLI history has no system message")
        # A boundary inside a record (a reply and its tool results) cannot be
        # written: the session is still made (for the review), and write_op says why.
        refusal = append.boundary_refusal(state, plan.boundary)
        appended = b""
        if refusal is None:
            text = build_compact_summary_text(summary)
            record = append.compaction_record(state, plan.boundary, text, now=now, new_id=new_id)
            appended = append.encode(state, record)
        messages = [self.summary_message(summary)]
        messages.extend(session.messages[i] for i in plan.preserved_indices)
        new_state = dataclasses.replace(state, appended=appended, refusal=refusal)
        return Session(session.path, self, messages, meta=session.meta, format_state=new_state)

    def write_refusal(self, session: Session) -> str | None:
        state = _loaded_state(session)
        if state is None:
            return "not a loaded Gemini CLI session"
        return write_refusal(state)

    def write_op(self, session: Session, compacted: Session) -> WriteOp:
        refusal = self.write_refusal(session)
        if refusal:
            raise ApplyError(f"{session.path}: {refusal}")
        state, new = state_of(session, GeminiState), state_of(compacted, GeminiState)
        if new.refusal:
            raise ApplyError(f"{session.path}: {new.refusal}")
        if new.data is not state.data or not new.appended:
            raise ApplyError(f"{session.path}: the compacted session was not built from this one")
        return WriteOp("append", new.appended)

    # --- restore points ---------------------------------------------------------------
    def restore_folder(self, path: Path) -> Path:
        """A folder of this tool's own beside ``chats/`` (Gemini CLI's clean-up
        deletes stray files in ``chats/``); else beside the file."""
        return discover.restore_folder(path)


FORMAT = GeminiCliFormat()

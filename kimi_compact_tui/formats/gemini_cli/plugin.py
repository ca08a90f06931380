"""The gemini-cli format: Gemini CLI sessions (``~/.gemini/tmp/*/chats/session-*.jsonl``).

A thin adapter over the pure core (:mod:`.records`, :mod:`.history`,
:mod:`.convert`, :mod:`.append`, :mod:`.discover`): everything the format keeps
about a loaded session is one :class:`.state.GeminiState`, held in
``Session.extra["state"]``.

No system message is pinned: the ``<session_context>`` message Gemini CLI sends
first is its own prefix, made fresh on every resume (the one in the file is never
sent).

Write: one ``$set.messages`` record is appended (:mod:`.append`), policy "append";
undo cuts the file back to its loaded length while it still ends with exactly that
record (the store does it from its audit record). Restore points and the audit
log go to a folder beside ``chats/`` (:func:`.discover.restore_folder`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import ApplyError, SessionFormatError
from kimi_compact_tui.formats.base import SessionInfo, WriteOp
from kimi_compact_tui.formats.gemini_cli import append, discover
from kimi_compact_tui.formats.gemini_cli.state import GeminiState, read_session, write_refusal
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message, Session

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.plan import CompactionPlan

FORMAT = "gemini-cli"
CLOSE_NOTE = (
    "Gemini CLI must not be running on this session: it keeps the history in memory "
    "and rewrites it into the file after its next turn, which would undo this "
    "compaction (close it first, then resume the session)"
)


def state_of(session: Session) -> GeminiState | None:
    state = session.extra.get("state")
    return state if isinstance(state, GeminiState) else None


def parse_session(data: bytes, path: Path) -> Session:
    state, messages = read_session(data, path)
    if not state.session_id:
        first = state.warnings[0] if state.warnings else "no header"
        raise SessionFormatError(f"{path}: no Gemini CLI session header in the file ({first})")
    return Session(
        path=path,
        format=FORMAT,
        messages=list(messages),
        recorded_tokens=state.recorded_tokens,
        extra={"state": state},
        warnings=list(state.warnings),
    )


def _header(record: object) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


class GeminiCliFormat:
    name = FORMAT
    label = "Gemini CLI session"
    agent = "Gemini CLI"
    write_policy = "append"
    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [discover.tmp_of(env, home)]

    def restore_folder(self, path: Path) -> Path:
        """Where the store keeps this session's restore points and audit log."""
        return discover.restore_folder(path)

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

    def resolve_folder(self, folder: Path) -> Path | None:
        return None  # a chats folder holds many sessions: open one by file or id

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return discover.discover(env, home, self.name, read_session)

    def describe(self, path: Path) -> SessionInfo:
        return discover.describe(path, self.name, read_session)

    def find_session(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discover.find_session(session_id, env, home, self.name, read_session)

    def write_refusal(self, session: Session) -> str | None:
        state = state_of(session)
        if session.format != FORMAT or state is None:
            return "not a loaded Gemini CLI session"
        return write_refusal(state)

    def parse(self, data: bytes, path: Path) -> Session:
        with gc_paused():
            return parse_session(data, path)

    def dump(self, session: Session) -> bytes:
        state = state_of(session)
        if state is None:
            raise SessionFormatError(
                f"{session.path}: a Gemini CLI session is written by appending a record to "
                "the file it was read from"
            )
        return state.data + state.appended

    def summary_message(self, summary: str) -> Message:
        return Message.make("user", build_compact_summary_text(summary))

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
        *,
        now: Any = None,
        new_id: Any = None,
    ) -> Session:
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        state = state_of(session)
        if state is None:
            raise ApplyError(f"{session.path}: not a loaded Gemini CLI session")
        if plan.leading:
            raise ApplyError(f"{session.path}: a Gemini CLI history has no system message")
        appended = b""  # nothing can be written for a boundary inside a record
        if append.boundary_refusal(state, plan.boundary) is None:
            text = build_compact_summary_text(summary)
            record = append.compaction_record(state, plan.boundary, text, now=now, new_id=new_id)
            appended = append.encode(state, record)
        messages = [self.summary_message(summary)]
        messages.extend(session.messages[i] for i in plan.preserved_indices)
        return Session(
            path=session.path,
            format=FORMAT,
            messages=messages,
            extra={"state": dataclasses.replace(state, appended=appended)},
        )

    def write_op(self, session: Session, compacted: Session, context: Mapping[str, Any]) -> WriteOp:
        refusal = self.write_refusal(session)
        if refusal:
            raise ApplyError(f"{session.path}: {refusal}")
        state, new = state_of(session), state_of(compacted)
        plan = context.get("plan")
        boundary = getattr(plan, "boundary", None)
        if state is not None and isinstance(boundary, int):
            refusal = append.boundary_refusal(state, boundary)
            if refusal:
                raise ApplyError(f"{session.path}: {refusal}")
        if new is None or state is None or new.data is not state.data or not new.appended:
            raise ApplyError(f"{session.path}: the compacted session was not built from this one")
        return WriteOp("append", new.appended, [CLOSE_NOTE])

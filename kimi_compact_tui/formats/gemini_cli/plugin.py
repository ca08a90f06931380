"""The gemini-cli format: Gemini CLI sessions (``~/.gemini/tmp/*/chats/session-*.jsonl``).

A thin adapter over the pure core (:mod:`.records`, :mod:`.history`,
:mod:`.convert`, :mod:`.append`, :mod:`.discover`): everything the format keeps
about a loaded session is one :class:`.state.GeminiState`, the session's
``format_state``.

No system message is pinned: the ``<session_context>`` message Gemini CLI sends
first is its own prefix, made fresh on every resume (the one in the file is never
sent).

Write: one ``$set.messages`` record is appended (:mod:`.append`) by the journal
base (:mod:`formats.journal`, the append strategy); undo cuts the file back to
its loaded length while it still ends with exactly that record. Restore points and the audit
log go to a folder beside ``chats/`` (:meth:`GeminiCliFormat.restore_folder`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import (
    Session,
    SessionInfo,
    state_of,
)
from kimi_compact_tui.formats.gemini_cli import discover, roles
from kimi_compact_tui.formats.gemini_cli.state import GeminiState, read_session, write_refusal
from kimi_compact_tui.formats.journal import Compaction, JournalFormat

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
    return FORMAT.loaded(path, state, messages)


def _header(record: object) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


class GeminiCliFormat(JournalFormat, state=GeminiState, finder=discover, roles=roles.ROLES):
    name = NAME
    label = "Gemini CLI session"
    agent = "Gemini CLI"

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

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discover.find_session(session_id, env, home, self.name, self.reader)

    def reader(self, data: bytes, path: Path) -> object:
        return read_session(data, path)

    def describe(self, path: Path) -> SessionInfo:
        return discover.describe(path, self.name, self.reader)

    # --- reading and writing the file -------------------------------------------------
    def parse(self, data: bytes, path: Path) -> Session:
        return parse_session(data, path)

    # --- the compaction ---------------------------------------------------------------
    # summary_message: the default (the spec's one-text user message; no
    # acknowledgement after it).

    def compaction(self, c: Compaction) -> Session:
        from kimi_compact_tui.formats.gemini_cli import append  # the writer: when writing

        session, plan, summary = c.session, c.plan, c.summary
        state = state_of(session, GeminiState)
        # A boundary inside a record (a reply and its tool results) cannot be
        # written: the session is still made (for the review), and write_op says why.
        refusal = append.boundary_refusal(state, plan.boundary)
        appended = b""
        if refusal is None:
            text = build_compact_summary_text(summary)
            record = append.compaction_record(
                state, plan.boundary, text, now=c.now, new_id=c.new_id
            )
            appended = append.encode(state, record)
        messages = [self.summary_message(summary)]
        messages.extend(session.messages[i] for i in plan.preserved_indices)
        new_state = dataclasses.replace(state, appended=appended, refusal=refusal)
        return Session(session.ref, self, messages, meta=session.meta, format_state=new_state)

    def refusal_of(self, state: GeminiState) -> str | None:
        return write_refusal(state)

    def compacted_refusal(self, state: GeminiState) -> str | None:
        return state.refusal

    # --- restore points ---------------------------------------------------------------
    def restore_folder(self, path: Path) -> Path:
        """A folder of this tool's own beside ``chats/`` (Gemini CLI's clean-up
        deletes stray files in ``chats/``); else beside the file."""
        return discover.restore_folder(path)


FORMAT = GeminiCliFormat()

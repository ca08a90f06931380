"""The claude-code format: Claude Code transcripts (``~/.claude/projects/*/<id>.jsonl``).

A thin adapter over the pure core (:mod:`.records`, :mod:`.chain`,
:mod:`.convert`, :mod:`.append`, :mod:`.discover`): everything the format keeps
about a loaded transcript is one :class:`.state.ClaudeState`, the session's
``format_state``.

The leading system message(s): the transcript holds no system prompt (Claude
Code sends its own on resume, with a context reminder before the first prompt:
its prefix), so ``SessionMeta.system_prompt`` is None and no message is pinned
before the history. Attachments are sent as system messages placed before the
next reply: a leading run of system messages only happens when a history starts
with attachments followed by a reply rather than a prompt (not seen in
practice). Such messages are kept, as the spec keeps leading system messages:
copied between the boundary and the summary; the agent then sends them after
the summary and any kept prompts, just before the first kept reply.

Write: the compaction records are appended (:mod:`.append`) by the journal
base (:mod:`formats.journal`, the append strategy); undo cuts the file back to
its loaded length while it still ends with exactly those records.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.compaction.tokens import session_tokens
from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import (
    Session,
    SessionInfo,
    splice,
    state_of,
)
from kimi_compact_tui.formats.claude_code import discover, roles
from kimi_compact_tui.formats.claude_code.records import looks_like_record
from kimi_compact_tui.formats.claude_code.state import ClaudeState, read_session, write_refusal
from kimi_compact_tui.formats.journal import Compaction, JournalFormat
from kimi_compact_tui.model import Message

NAME = "claude-code"
CLOSE_NOTE = (
    "Claude Code must not be running on this session: it keeps the history in memory "
    "and would append its next turn after the old one, not after this compaction "
    "(close it first, then resume the session)"
)
_HEAD_PREFIXES = (b'{"parentUuid":', b'{"type":"')


def parse_transcript(data: bytes, path: Path) -> Session:
    state, messages = read_session(data, path)
    if not state.records:
        first = state.warnings[0] if state.warnings else f"{path}: no record"
        raise SessionFormatError(f"{path}: no Claude Code record in the file ({first})")
    return FORMAT.loaded(path, state, messages)


class ClaudeCodeFormat(JournalFormat, state=ClaudeState, finder=discover.FINDER, roles=roles.ROLES):
    name = NAME
    label = "Claude Code transcript"
    agent = "Claude Code"

    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog
    drops_leading_system = False  # kept, as the spec keeps them (see above)

    def recognise(self, path: Path, head: bytes) -> bool:
        """The first line is a record only Claude Code writes."""
        first = head.lstrip().split(b"\n", 1)[0].rstrip(b"\r")
        try:
            record = json.loads(first.decode("utf-8"))
        except (ValueError, RecursionError):
            # a first line longer than the head: its start tells
            return (
                b"\n" not in head.lstrip()
                and first.startswith(_HEAD_PREFIXES)
                and (b'"sessionId":"' in first)
            )
        return looks_like_record(record)

    def resolve_folder(self, folder: Path) -> Path | None:
        """A session's own folder (sub-agents, tool results) stands for the
        transcript beside it."""
        candidate = folder.parent / f"{folder.name}.jsonl"
        try:
            with open(candidate, "rb") as fh:
                head = fh.read(65536)
        except OSError:
            return None
        return candidate if self.recognise(candidate, head) else None

    def reader(self, data: bytes, path: Path) -> object:
        return read_session(data, path)

    def describe(self, path: Path) -> SessionInfo:
        target = self.resolve_folder(path) if path.is_dir() else path
        return discover.describe(target or path, self.name, read_session)

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discover.find_session(session_id, env, home)

    def refusal_of(self, state: ClaudeState) -> str | None:
        return write_refusal(state)

    def parse(self, data: bytes, path: Path) -> Session:
        return parse_transcript(data, path)

    def summary_message(self, summary: str) -> Message:
        text = build_compact_summary_text(summary)
        return Message({"role": "user", "content": text, "claude": {"compact_summary": True}})

    def compaction(self, c: Compaction) -> Session:
        session, plan, summary = c.session, c.plan, c.summary
        state = state_of(session, ClaudeState)
        pre = session.meta.recorded_tokens or session_tokens(session.messages)
        from kimi_compact_tui.formats.claude_code import append  # the writer: when writing

        records = append.compaction_records(
            state,
            leading=plan.leading,
            boundary=plan.boundary,
            summary_text=build_compact_summary_text(summary),
            pre_tokens=pre,
            now=c.now,
            new_uuid=c.new_id,
        )
        appended = append.encode_records(state, records)
        kept = splice(session, plan, self.summary_message(summary))
        new_state = dataclasses.replace(state, appended=appended)
        return Session(session.ref, self, kept, format_state=new_state)


FORMAT = ClaudeCodeFormat()

"""The claude-code format: Claude Code transcripts (``~/.claude/projects/*/<id>.jsonl``).

A thin adapter over the pure core (:mod:`.records`, :mod:`.chain`,
:mod:`.convert`, :mod:`.append`, :mod:`.discover`): everything the format keeps
about a loaded transcript is one :class:`.state.ClaudeState`, held in
``Session.extra["state"]``.

The leading system message(s): the transcript holds no system prompt (Claude
Code sends its own on resume, with a context reminder before the first prompt:
its prefix), so no message is pinned before the history. Attachments are sent
as system messages placed before the next reply: a leading run of system
messages only happens when a history starts with attachments followed by a
reply rather than a prompt (not seen in practice). Such messages are kept, as
the spec keeps leading system messages: copied between the boundary and the
summary; the agent then sends them after the summary and any kept prompts,
just before the first kept reply.

Write: the compaction records are appended (:mod:`.append`), policy "append";
undo cuts the file back to its loaded length while it still ends with exactly
those records (the store does it from its audit record).
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
from kimi_compact_tui.formats.claude_code import append, discover
from kimi_compact_tui.formats.claude_code.records import looks_like_record
from kimi_compact_tui.formats.claude_code.state import ClaudeState, read_session, write_refusal
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Message, Session

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.plan import CompactionPlan

FORMAT = "claude-code"
CLOSE_NOTE = (
    "Claude Code must not be running on this session: it keeps the history in memory "
    "and would append its next turn after the old one, not after this compaction "
    "(close it first, then resume the session)"
)
_HEAD_PREFIXES = (b'{"parentUuid":', b'{"type":"')


def state_of(session: Session) -> ClaudeState | None:
    state = session.extra.get("state")
    return state if isinstance(state, ClaudeState) else None


def parse_transcript(data: bytes, path: Path) -> Session:
    state, messages = read_session(data, path)
    if not state.records:
        first = state.warnings[0] if state.warnings else f"{path}: no record"
        raise SessionFormatError(f"{path}: no Claude Code record in the file ({first})")
    return Session(
        path=path,
        format=FORMAT,
        messages=list(messages),
        recorded_tokens=state.recorded_tokens,
        extra={"state": state},
        warnings=list(state.warnings),
    )


def _estimate(messages: list[Message]) -> int:
    return sum(len(m.text()) for m in messages) // 4


class ClaudeCodeFormat:
    name = FORMAT
    label = "Claude Code transcript"
    agent = "Claude Code"
    write_policy = "append"
    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog

    def discovery_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [discover.projects_of(env, home)]

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

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        return discover.discover(env, home, self.name, read_session)

    def describe(self, path: Path) -> SessionInfo:
        target = self.resolve_folder(path) if path.is_dir() else path
        return discover.describe(target or path, self.name, read_session)

    def find_session(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discover.find_session(session_id, env, home)

    def write_refusal(self, session: Session) -> str | None:
        state = state_of(session)
        if session.format != FORMAT or state is None:
            return "not a loaded Claude Code session"
        return write_refusal(state)

    def parse(self, data: bytes, path: Path) -> Session:
        with gc_paused():
            return parse_transcript(data, path)

    def dump(self, session: Session) -> bytes:
        state = state_of(session)
        if state is None:
            raise SessionFormatError(
                f"{session.path}: a Claude Code session is written by appending records to "
                "the transcript it was read from"
            )
        return state.data + state.appended

    def summary_message(self, summary: str) -> Message:
        text = build_compact_summary_text(summary)
        return Message({"role": "user", "content": text, "claude": {"compact_summary": True}})

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
        *,
        now: Any = None,
        new_uuid: Any = None,
    ) -> Session:
        if plan.noop:
            raise ValueError(f"cannot compact: {plan.noop}")
        state = state_of(session)
        if state is None:
            raise ApplyError(f"{session.path}: not a loaded Claude Code session")
        pre = session.recorded_tokens or _estimate(session.messages)
        records = append.compaction_records(
            state,
            leading=plan.leading,
            boundary=plan.boundary,
            summary_text=build_compact_summary_text(summary),
            pre_tokens=pre,
            now=now,
            new_uuid=new_uuid,
        )
        appended = append.encode_records(state, records)
        messages = session.messages
        kept = [messages[i] for i in plan.leading_system_indices]
        kept.append(self.summary_message(summary))
        kept.extend(messages[i] for i in plan.preserved_indices)
        return Session(
            path=session.path,
            format=FORMAT,
            messages=kept,
            extra={"state": dataclasses.replace(state, appended=appended)},
        )

    def write_op(self, session: Session, compacted: Session, context: Mapping[str, Any]) -> WriteOp:
        refusal = self.write_refusal(session)
        if refusal:
            raise ApplyError(f"{session.path}: {refusal}")
        state, new = state_of(session), state_of(compacted)
        if new is None or state is None or new.data is not state.data or not new.appended:
            raise ApplyError(f"{session.path}: the compacted session was not built from this one")
        return WriteOp("append", new.appended, [CLOSE_NOTE])

"""The kimi-code format: Kimi Code CLI 2.1 sessions (``agents/<id>/wire.jsonl``).

Read: the journal is folded into the history exactly as kimi-code resumes it
(:mod:`.wire`, :mod:`.fold`); each message is one kimi-code context message.
Write: four records are appended (:mod:`.records`); earlier bytes never
change. The plugin's state is a :class:`KimiCodeState`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.summary import build_compact_summary_text
from kimi_compact_tui.formats.base import (
    Session,
    SessionMeta,
    state_of,
)
from kimi_compact_tui.formats.journal import Compaction, JournalFormat
from kimi_compact_tui.formats.kimi_code import discover as discovery
from kimi_compact_tui.formats.kimi_code import roles, wire
from kimi_compact_tui.formats.kimi_code.convert import to_message
from kimi_compact_tui.formats.kimi_code.fold import fold
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.model import Message

NAME = "kimi-code"
WIRE_NAME = "wire.jsonl"
CLOSE_NOTE = (
    "kimi-code must not be running on this session: it keeps its own copy of the "
    "history in memory and would not see this compaction (close it first)"
)
TOKEN_RECORDS = (
    "token_counting.measured",
    "token_counting.turn_recorded",
    "token_counting.rebased",
    "token_counting.truncated",
)


def agent_id_of(path: Path) -> str:
    """``agents/<id>/wire.jsonl`` names its agent; anything else is ``main``."""
    if path.name == WIRE_NAME and path.parent.parent.name == "agents":
        return path.parent.name
    return "main"


@dataclass(frozen=True)
class KimiCodeState:
    """What the kimi-code plugin keeps of a session: the journal bytes read
    (the write appends to exactly them), its agent, kimi-code's own context
    messages, why it cannot be written (``open_turn``, ``tail``), and for a
    compacted session the records to append."""

    journal: bytes
    agent_id: str
    context: list[dict[str, Any]]
    open_turn: str | None = None
    tail: str = wire.TAIL_NEWLINE
    appended: bytes = b""
    compaction: dict[str, Any] | None = None

    @property
    def journal_length(self) -> int:
        return len(self.journal)

    @property
    def data(self) -> bytes:
        """The journal's bytes as read (the journal base's name for them)."""
        return self.journal


def parse_journal(data: bytes, path: Path) -> Session:
    journal = wire.read_journal(data, path)
    agent_id = agent_id_of(path)
    chain = wire.restorable_chain(journal, path)
    result = fold(chain, agent_id, path)
    system_prompt = None
    recorded = None
    for entry in journal.entries:
        record = entry.record
        if record.get("agentId", agent_id) != agent_id:
            continue
        kind = record["type"]
        if kind == "profile.bind" and type(record.get("systemPrompt")) is str:
            system_prompt = record["systemPrompt"]
        elif kind in TOKEN_RECORDS and type(record.get("tokens")) in (int, float):
            recorded = int(record["tokens"])
    return Session(
        SessionRef(path),
        FORMAT,
        [to_message(cm) for cm in result.history],
        journal.warnings + result.warnings,
        SessionMeta(system_prompt=system_prompt, recorded_tokens=recorded),
        KimiCodeState(data, agent_id, result.history, result.open_turn, journal.tail),
    )


class KimiCodeFormat(JournalFormat, state=KimiCodeState, finder=discovery, roles=roles.ROLES):
    name = NAME
    label = "kimi-code wire.jsonl"
    agent = "kimi-code"

    write_notes = (CLOSE_NOTE,)  # shown by the confirm dialog

    def refusal_of(self, state: KimiCodeState) -> str | None:
        """Why a compaction cannot be appended to this loaded journal, or None."""
        if state.tail == wire.TAIL_TORN:
            return (
                "the journal ends with a partial record (kimi-code stopped while writing it); "
                "open the session once in kimi-code, which repairs the journal, then compact"
            )
        if state.open_turn:
            return (
                f"the session ends mid-turn ({state.open_turn}); run one more turn in "
                "kimi-code, then compact"
            )
        return None

    def recognise(self, path: Path, head: bytes) -> bool:
        """The first record is kimi-code's ``metadata`` record (kimi-code
        writes ``created_at``; kimi-cli's own wire.jsonl is another file)."""
        first = head.split(b"\n", 1)[0].rstrip(b"\r")
        if b'"metadata"' not in first:
            return False
        try:
            record = json.loads(first.decode("utf-8"))
        except (ValueError, RecursionError):
            return False
        return (
            type(record) is dict
            and record.get("type") == "metadata"
            and type(record.get("protocol_version")) is str
            and type(record.get("created_at")) in (int, float)
        )

    def resolve_folder(self, folder: Path) -> Path | None:
        """A kimi-code session folder's main journal, or an agent folder's
        (a kimi-cli session folder also holds a wire.jsonl: not this one)."""
        for candidate in (folder / "agents" / "main" / WIRE_NAME, folder / WIRE_NAME):
            try:
                with open(candidate, "rb") as fh:
                    head = fh.read(4096)
            except OSError:
                continue
            if self.recognise(candidate, head):
                return candidate
        return None

    def short_name(self, ref: SessionRef) -> str:
        """``<session folder>/wire.jsonl`` (``… · <agent>`` for a sub-agent's journal)."""
        path = ref.path
        agent = agent_id_of(path)
        folder = path.parents[2] if path.parent.parent.name == "agents" else path.parent
        name = f"{folder.name}/{path.name}" if folder.name else path.name
        return name if agent == "main" else f"{name} · {agent}"

    def find_file(self, session_id: str, env: Mapping[str, str], home: Path) -> Path | None:
        return discovery.find_session(session_id, env, home)

    def parse(self, data: bytes, path: Path) -> Session:
        return parse_journal(data, path)

    def summary_message(self, summary: str) -> Message:
        from kimi_compact_tui.formats.kimi_code import handoff  # the writer: when writing

        return to_message(handoff.summary_message(build_compact_summary_text(summary)))

    def compaction(self, c: Compaction) -> Session:
        from kimi_compact_tui.formats.kimi_code import handoff, records  # the writer

        session, plan, summary, output_tokens = c.session, c.plan, c.summary, c.output_tokens
        state = state_of(session, KimiCodeState)
        context = state.context
        text = build_compact_summary_text(summary)
        kept = context[plan.boundary :]
        summary_cm = handoff.summary_message(text)
        before = session.meta.recorded_tokens
        if before is None:
            before = sum(handoff.estimate_message(cm) for cm in context)
        kept_tokens = sum(handoff.estimate_message(cm) for cm in kept)
        if output_tokens is not None:
            after = output_tokens + kept_tokens
        else:
            after = handoff.estimate_message(summary_cm) + kept_tokens
        new = records.compaction_records(
            agent_id=state.agent_id,
            summary=summary,
            context_summary=text,
            compacted_count=plan.boundary,
            tokens_before=before,
            tokens_after=after,
            summary_output_tokens=output_tokens,
            length=1 + len(kept),
            time_ms=None if c.now is None else round(c.now.timestamp() * 1000),
        )
        appended = records.encode_records(new)
        if state.tail == wire.TAIL_UNTERMINATED:
            appended = b"\n" + appended
        messages = [to_message(summary_cm)] + list(session.messages[plan.boundary :])
        new_state = replace(
            state, context=[summary_cm, *kept], appended=appended, compaction=new[1]
        )
        meta = SessionMeta(session.meta.system_prompt, after)
        return Session(session.ref, self, messages, meta=meta, format_state=new_state)


FORMAT = KimiCodeFormat()

"""Everything this tool keeps about one loaded Claude Code transcript.

:class:`ClaudeState` is plain, frozen data: the bytes read (what a write must
still find on disk, and what an unchanged session dumps to), every record, the
history chain, and for every chain position the message it became, so a boundary
between messages maps back to the records to keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.claude_code import chain as chains
from kimi_compact_tui.formats.claude_code import convert, subagent
from kimi_compact_tui.formats.claude_code.records import TAIL_TORN, Record, read_records
from kimi_compact_tui.model import Message

TITLE_LENGTH = 80


@dataclass(frozen=True)
class ClaudeState:
    data: bytes  # the transcript's bytes as loaded
    records: tuple[Record, ...]  # every JSON-object line, in file order
    chain: tuple[int, ...]  # record indexes: the history Claude Code resumes
    owners: tuple[int, ...]  # per chain position: the message it belongs to (-1: none)
    leaf: int | None  # record index of the history's leaf
    tail: str  # records.TAIL_*: how the file ends
    warnings: tuple[str, ...]
    open_turn: str | None  # why the history ends mid-turn, if it does
    session_id: str | None
    cwd: str | None
    title: str | None
    recorded_tokens: int | None  # the last reply's context size, as the API reported it
    # A compacted session's state: the records to append; its other fields
    # describe the file as loaded (reload after a write).
    appended: bytes = b""

    @property
    def length(self) -> int:
        return len(self.data)

    def leaf_record(self) -> Record | None:
        return self.records[self.leaf] if self.leaf is not None else None

    def positions_of(self, message_index: int) -> list[int]:
        """The chain positions (see ``chain``) message ``message_index`` was made from."""
        return [p for p, owner in enumerate(self.owners) if owner == message_index]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"


def first_prompt(records: tuple[Record, ...]) -> str | None:
    """The first thing the user typed (not a caveat, command echo or summary)."""
    for rec in records:
        if rec.kind != "user" or rec.sidechain or rec.obj.get("isMeta") is True:
            continue
        if rec.obj.get("isCompactSummary") is True:
            continue
        content = rec.message.get("content")
        texts: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "text":
                    text = b.get("text")
                    if isinstance(text, str):
                        texts.append(text)
        for text in texts:
            if text.strip() and not text.lstrip().startswith("<"):
                return _short(text)
    return None


def _title(records: tuple[Record, ...], session_id: str | None, leaf: Record | None) -> str | None:
    custom = ai = older = None
    for rec in records:
        obj = rec.obj
        if rec.kind == "custom-title" and type(obj.get("customTitle")) is str:
            custom = obj["customTitle"]
        elif rec.kind == "ai-title" and type(obj.get("aiTitle")) is str:
            ai = obj["aiTitle"]
        elif rec.kind == "summary" and leaf is not None and obj.get("leafUuid") == leaf.uuid:
            older = obj.get("summary") if type(obj.get("summary")) is str else older
    for title in (custom, ai, older):
        if title and title.strip():
            return _short(title)
    return first_prompt(records)


def _recorded_tokens(records: tuple[Record, ...], chain: tuple[int, ...]) -> int | None:
    """The last reply's context size, or None when no reply came since the
    last compaction: the kept records copied after a summary keep their older
    timestamps and their usage, which describes the history before it."""
    compacted = [records[i] for i in chain if records[i].obj.get("isCompactSummary") is True]
    since = chains._millis(compacted[-1].timestamp) if compacted else None
    for index in reversed(chain):
        rec = records[index]
        if rec.obj.get("isCompactSummary") is True:
            return None
        at = chains._millis(rec.timestamp) if since is not None else None
        if since is not None and (at is None or at < since):
            return None
        usage = rec.message.get("usage") if rec.kind == "assistant" else None
        if type(usage) is not dict or rec.message.get("model") == convert.SYNTHETIC_MODEL:
            continue
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        total = sum(usage.get(k) or 0 for k in keys if type(usage.get(k)) is int)
        if type(usage.get("output_tokens")) is int:
            total += usage["output_tokens"]
        if total > 0:
            return total
    return None


def read_session(data: bytes, path: Path) -> tuple[ClaudeState, tuple[Message, ...]]:
    """The state and the messages of the transcript ``data`` (read from ``path``)."""
    transcript = read_records(data, path)
    records = transcript.records
    refused = subagent.refusal(records, path)
    if refused is not None:  # a sub-agent's transcript: Claude Code never resumes it
        raise SessionFormatError(refused)
    resumed = chains.resume_chain(records)
    mapped = convert.to_messages(records, resumed.records)
    leaf = records[resumed.leaf] if resumed.leaf is not None else None
    envelope = leaf or next((r for r in reversed(records) if r.is_transcript()), None)
    session_id = cwd = None
    if envelope is not None:
        sid, where = envelope.obj.get("sessionId"), envelope.obj.get("cwd")
        session_id = sid if type(sid) is str else None
        cwd = where if type(where) is str else None
    if session_id is None:
        session_id = path.stem
    state = ClaudeState(
        data=data,
        records=records,
        chain=resumed.records,
        owners=mapped.owners,
        leaf=resumed.leaf,
        tail=transcript.tail,
        warnings=transcript.warnings,
        open_turn=convert.open_turn(mapped.messages),
        session_id=session_id,
        cwd=cwd,
        title=_title(records, session_id, leaf),
        recorded_tokens=_recorded_tokens(records, resumed.records),
    )
    return state, mapped.messages


def write_refusal(state: ClaudeState) -> str | None:
    """Why a compaction cannot be appended to this transcript, or None."""
    if state.tail == TAIL_TORN:
        return (
            "the transcript ends with a partial record (Claude Code may be writing to it); "
            "close Claude Code on this session, reload and review again"
        )
    if state.leaf is None:
        return "the transcript holds no conversation Claude Code would resume"
    if state.open_turn:
        return (
            f"the session ends mid-turn ({state.open_turn}); run one more turn in Claude Code, "
            "then compact"
        )
    return None

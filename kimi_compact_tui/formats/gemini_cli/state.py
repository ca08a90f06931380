"""Everything this tool keeps about one loaded Gemini CLI session.

:class:`GeminiState` is plain, frozen data: the bytes read (what a write must still
find on disk, and what an unchanged session dumps to), the message records as
Gemini CLI loads them, the metadata, and for every message of this tool the index
of the record it comes from, so a boundary between messages maps back to the
records to keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.formats.gemini_cli import convert, history, records, roles
from kimi_compact_tui.model import Message

TITLE_LENGTH = 80


@dataclass(frozen=True)
class GeminiState:
    data: bytes  # the file's bytes as loaded
    records: tuple[dict[str, Any], ...]  # the message records, in history order
    owners: tuple[int, ...]  # per message: the index of its record in ``records``
    metadata: dict[str, Any]  # the merged header and $set records (messages left out)
    warnings: tuple[str, ...]
    open_turn: str | None  # why the history ends mid-turn, if it does
    legacy: bool  # a one-object ``.json`` session
    torn: bool  # the last line has no line end
    title: str | None
    recorded_tokens: int | None  # the last reply's total tokens, as the API counted them
    # A compacted session's state: the record to append, or why none can be (a
    # boundary inside a record); its other fields describe the file as loaded
    # (reload after a write).
    appended: bytes = b""
    refusal: str | None = None

    @property
    def length(self) -> int:
        return len(self.data)

    @property
    def session_id(self) -> str | None:
        sid = self.metadata.get("sessionId")
        return sid if isinstance(sid, str) else None

    @property
    def kind(self) -> str | None:
        kind = self.metadata.get("kind")
        return kind if isinstance(kind, str) else None

    def resumable(self) -> bool:
        """Gemini CLI lists (and resumes) this file: a conversation worth resuming
        that is not a sub-agent's."""
        return self.kind != "subagent" and any(records.is_resumable(m) for m in self.records)


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"


def _title(loaded: records.Loaded) -> str | None:
    summary = loaded.metadata.get("summary")
    if isinstance(summary, str) and summary.strip():
        return short(summary)
    if loaded.first_user and loaded.first_user.strip():
        return short(loaded.first_user)
    return None


def _recorded_tokens(messages: list[dict[str, Any]]) -> int | None:
    """The last reply's total, or None when no reply came since a compaction:
    the kept messages copied after a summary keep their older timestamps (ISO
    8601 as ``toISOString`` writes it, so they compare as text), and their
    figures describe the history before it."""
    found, latest = None, ""
    for msg in messages:
        stamp = msg.get("timestamp")
        if type(stamp) is str and stamp < latest:  # a copy kept after a compaction
            found = None
            continue
        latest = max(latest, stamp) if type(stamp) is str else latest
        tokens = msg.get("tokens") if msg.get("type") == "gemini" else None
        total = tokens.get("total") if isinstance(tokens, dict) else None
        if type(total) is int and total > 0:
            found = total
    return found


def read_session(data: bytes, path: Path) -> tuple[GeminiState, tuple[Message, ...]]:
    """The state and the messages of the Gemini CLI session ``data`` (read from ``path``)."""
    loaded = records.load(data, path)
    summaries = roles.compression_summaries(loaded.messages)
    mapped = convert.to_messages(history.resumed_turns(loaded.messages), summaries)
    state = GeminiState(
        data=data,
        records=tuple(loaded.messages),
        owners=mapped.owners,
        metadata={k: v for k, v in loaded.metadata.items() if k != "messages"},
        warnings=tuple(loaded.warnings),
        open_turn=convert.open_turn(mapped.messages),
        legacy=loaded.legacy,
        torn=loaded.torn,
        title=_title(loaded),
        recorded_tokens=_recorded_tokens(loaded.messages),
    )
    return state, mapped.messages


def write_refusal(state: GeminiState) -> str | None:
    """Why a compaction cannot be appended to this session, or None."""
    if state.legacy:
        return (
            "this is an older one-object .json Gemini CLI session; resume it once in "
            "Gemini CLI (which rewrites it as a .jsonl journal), then compact that file"
        )
    if state.kind == "subagent":
        return "this is a sub-agent's session, which Gemini CLI never resumes"
    if not state.session_id or not state.records:
        return "the file holds no conversation Gemini CLI would resume"
    if state.open_turn:
        return (
            f"the session ends mid-turn ({state.open_turn}); run one more turn in Gemini CLI, "
            "then compact"
        )
    return None

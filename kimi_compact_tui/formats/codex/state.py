"""Everything the Codex format keeps about one loaded rollout, in one value.

:func:`load` reads the bytes (:mod:`.rollout`), replays the history Codex
resumes (:mod:`.history`) and maps it to messages (:mod:`.messages`). The
:class:`CodexState` it returns (the session's ``format_state``) is all the
format needs later: to dump the file, to build the compacted session and the
record to append, and to refuse a write. What the rollout says of the agent
(its base instructions, its last token count) and the lines it skips are the
session's ``meta`` and ``warnings``, not state.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.base import SessionMeta
from kimi_compact_tui.formats.codex.history import HistoryItem, replay
from kimi_compact_tui.formats.codex.messages import map_history
from kimi_compact_tui.formats.codex.rollout import Rollout, read_rollout
from kimi_compact_tui.model import Message


@dataclass(frozen=True)
class CodexState:
    data: bytes  # the rollout's bytes as loaded (what dump gives back; the fingerprint's input)
    session_id: str | None
    cwd: str | None
    history: tuple[HistoryItem, ...]  # the history Codex resumes
    starts: tuple[int, ...]  # per message: its first history item
    prefix: int  # history items before the first message (Codex's own context)
    paginated: bool  # records carry an ordinal
    max_ordinal: int | None
    last_timestamp: str | None
    tail: str  # rollout.TAIL_*
    open_turn: str | None  # why the rollout ends mid-turn, or None
    compactions: int  # compacted records in the file
    appended: bytes = b""  # a compacted session's record(s), to append to ``data``

    @property
    def length(self) -> int:
        return len(self.data)


def _recorded_tokens(rollout: Rollout) -> int | None:
    found = None
    for rec in rollout.records:
        if rec.type == "event_msg" and rec.payload.get("type") == "token_count":
            info = rec.payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            total = last.get("total_tokens") if isinstance(last, dict) else None
            if type(total) is int:
                found = total
        elif rec.type == "compacted":
            found = None
    return found


def session_id_from_name(path: Path) -> str | None:
    """``rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl`` names its session."""
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    if stem.startswith("rollout-") and len(stem) > 28:
        return stem[28:]
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else None


@dataclass(frozen=True)
class LoadedRollout:
    state: CodexState
    messages: list[Message]
    # session_meta's base instructions (what Codex sends first, as a developer
    # message) and the last token count Codex recorded
    meta: SessionMeta
    warnings: list[str]  # the lines Codex skips, each naming file:line


def load(data: bytes, path: Path) -> LoadedRollout:
    rollout = read_rollout(data, path)
    if not rollout.records:
        raise SessionFormatError(f"{path}: no Codex rollout record in this file")
    history = replay(rollout)
    mapped = map_history(history.items)
    meta = rollout.meta
    sid = meta.get("id") if isinstance(meta.get("id"), str) else session_id_from_name(path)
    state = CodexState(
        data=data,
        session_id=sid,
        cwd=meta.get("cwd") if isinstance(meta.get("cwd"), str) else None,
        history=history.items,
        starts=mapped.starts,
        prefix=mapped.prefix,
        paginated=rollout.paginated,
        max_ordinal=rollout.max_ordinal,
        last_timestamp=rollout.last_timestamp,
        tail=rollout.tail,
        open_turn=history.open_turn,
        compactions=history.compactions,
    )
    agent = SessionMeta(
        system_prompt=_text(meta.get("base_instructions")),
        recorded_tokens=_recorded_tokens(rollout),
    )
    return LoadedRollout(state, mapped.messages, agent, list(rollout.warnings))

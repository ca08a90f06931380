"""opencode's ledger: each compaction pair in the session's rows.

opencode keeps every row: a compaction is a ``user`` row with a ``compaction``
part (``auto`` says whether opencode started it, ``tail_start_id`` its first
kept row), then an ``assistant`` row marked ``summary`` whose text is the
summary. The tokens before and after are the last reply's before it and the
first reply's after it (``tokens.total``). The history it had before is read back from the rows before the
compaction's user row, as opencode would have resumed them; the rows from
``tail_start_id`` on are what it kept verbatim.
"""

from __future__ import annotations

import time
from dataclasses import replace

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import table, whole
from kimi_compact_tui.formats.ledger import Compaction
from kimi_compact_tui.formats.opencode.db import MessageRow
from kimi_compact_tui.formats.opencode.history import resume_history
from kimi_compact_tui.formats.opencode.store import OpencodeState


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _tokens(row: MessageRow) -> int | None:
    tokens = table(row.data.get("tokens"))
    return whole(tokens.get("total")) or None


def compactions(session: Session) -> list[Compaction]:
    state = session.format_state
    if not isinstance(state, OpencodeState):
        return []
    rows = state.rows
    messages = rows.messages
    out: list[Compaction] = []
    for k, row in enumerate(messages):
        part = next((p for p in row.parts if p.type == "compaction"), None)
        if row.role != "user" or part is None:
            continue
        summary_row = next(
            (m for m in messages[k + 1 :]
             if m.role == "assistant" and m.data.get("summary") and m.data.get("parentID") == row.id),
            None,
        )  # fmt: skip
        summary = None
        if summary_row is not None:
            summary = "".join(
                str(p.data.get("text") or "") for p in summary_row.parts if p.type == "text"
            )
        earlier = [
            _tokens(m) for m in messages[:k] if m.role == "assistant" and not m.data.get("summary")
        ]
        later = [
            _tokens(m) for m in messages[k + 1 :]
            if m.role == "assistant" and not m.data.get("summary")
            and m.data.get("mode") != "compaction"
        ]  # fmt: skip
        entry = Compaction(
            time=_iso(row.time_created),
            trigger="auto" if part.data.get("auto") else "manual",
            summary=summary,
            tokens_before=next((t for t in reversed(earlier) if t), None),
            # the first reply after it: the context opencode then counted
            tokens_after=later[0] if later else None,
        )
        history = resume_history(replace(rows, messages=messages[:k]))
        entry.before = list(history.messages)
        start = part.data.get("tail_start_id")
        kept_rows = set()
        if isinstance(start, str):
            index = next((i for i, m in enumerate(messages[:k]) if m.id == start), None)
            kept_rows = {m.id for m in messages[index:k]} if index is not None else set()
        entry.kept_messages = [
            m for m, origin in zip(history.messages, history.origins, strict=True)
            if origin.message_id in kept_rows
        ]  # fmt: skip
        if summary_row is None:
            entry.notes.append("its summary row is missing (an unfinished compaction)")
        out.append(entry)
    return out

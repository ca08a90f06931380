"""Gemini CLI's ledger: each compression in the session file.

Gemini CLI appends to its session file, and replaces the whole history with a
``{"$set": {"messages": [...]}}`` record. A compression is such a record whose
second message (after Gemini CLI's context) is a user text never seen before in
the file (the summary), followed by its acknowledgement and the turns it kept
(copies, under new ids); a resume's records bring back messages seen before. The history before it is the file up
to that record, as Gemini CLI would have resumed it. Its time is the summary
message's; the trigger is not recorded.
"""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import table
from kimi_compact_tui.formats.gemini_cli.state import GeminiState
from kimi_compact_tui.formats.ledger import Compaction, parse_bytes, parts_text
from kimi_compact_tui.fsutil import json_lines


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else parts_text(content)


def compactions(session: Session) -> list[Compaction]:
    state = session.format_state
    if not isinstance(state, GeminiState) or session.path is None:
        return []
    data = state.data
    seen: set[str] = set()
    out: list[Compaction] = []
    for offset, _end, record in json_lines(data):
        listed = table(record.get("$set")).get("messages")
        if not isinstance(listed, list):
            if isinstance(record.get("id"), str):
                seen.add(record["id"])
            continue
        messages = [m for m in listed if isinstance(m, dict)]
        new = [m for m in messages[1:] if m.get("id") not in seen]  # after the context
        kept_copies = messages[2:]  # the acknowledgement, then the turns it kept
        seen.update(m["id"] for m in messages if isinstance(m.get("id"), str))
        # the summary comes right after the context, as a user text never seen before
        if len(messages) < 2 or not new or messages[1] is not new[0]:
            continue
        summary = new[0]
        if summary.get("type") != "user" or not _text(summary):
            continue
        entry = Compaction(
            time=summary.get("timestamp") if isinstance(summary.get("timestamp"), str) else None,
            trigger=None,
            summary=_text(summary),
            offset=offset,
        )
        try:
            before = parse_bytes(session.format, data[:offset], session.path)
        except Exception as exc:  # noqa: BLE001 - then what it replaced is not judged
            entry.notes.append(f"the history before it could not be read ({exc})")
        else:
            entry.before = list(before.messages)
            entry.tokens_before = before.meta.recorded_tokens
            kept = {_text(m) for m in kept_copies if m.get("type") == "user" and _text(m)}
            entry.kept_messages = [m for m in entry.before if m.role == "user" and m.text() in kept]
        out.append(entry)
    return out

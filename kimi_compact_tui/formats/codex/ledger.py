"""Codex's ledger: each ``compacted`` record in the rollout.

Codex keeps the items before a ``compacted`` record, so the history it had
before each compaction is read back by parsing the rollout up to the
compaction's first record (its summary reply, marked ``compaction_output``,
when there is one). The record's ``message`` is the summary (also the last item of its
``replacement_history``, after the user messages Codex carries over verbatim). The token figures are the last
``token_count`` before it and the first after it.
"""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.codex.state import CodexState
from kimi_compact_tui.formats.context import table, whole
from kimi_compact_tui.formats.ledger import Compaction, parse_bytes, parts_text
from kimi_compact_tui.fsutil import json_lines
from kimi_compact_tui.wording import count


def _total(record: dict[str, Any]) -> int | None:
    payload = table(record.get("payload"))
    if record.get("type") != "event_msg" or payload.get("type") != "token_count":
        return None
    last = table(table(payload.get("info")).get("last_token_usage"))
    return whole(last.get("total_tokens")) or None


def _text(item: Any) -> str:
    return parts_text(table(item).get("content"))


def compactions(session: Session) -> list[Compaction]:
    state = session.format_state
    if not isinstance(state, CodexState) or session.path is None:
        return []
    records = [(start, record) for start, _end, record in json_lines(state.data)]
    out: list[Compaction] = []
    start_of_compaction: int | None = None
    last_total: int | None = None
    for offset, record in records:
        payload = table(record.get("payload"))
        total = _total(record)
        if total is not None:
            last_total = total
            if out and out[-1].tokens_after is None and out[-1].offset is not None:
                out[-1].tokens_after = total if offset > out[-1].offset else None
        if record.get("type") == "response_item" and table(payload.get("metadata")).get(
            "compaction_output"
        ):
            start_of_compaction = offset
            continue
        if record.get("type") != "compacted":
            continue
        begin = start_of_compaction if start_of_compaction is not None else offset
        start_of_compaction = None
        replacement = payload.get("replacement_history")
        items = replacement if isinstance(replacement, list) else []
        message = payload.get("message")
        summary = message if isinstance(message, str) else (_text(items[-1]) if items else None)
        kept_items = [
            item for item in items
            if table(item).get("role") == "user" and _text(item) != summary
        ]  # fmt: skip
        entry = Compaction(
            time=record.get("timestamp") if isinstance(record.get("timestamp"), str) else None,
            trigger=None,
            summary=summary,
            tokens_before=last_total,
            offset=begin,
        )
        try:
            before = parse_bytes(session.format, state.data[:begin], session.path)
        except Exception as exc:  # noqa: BLE001 - the history before is then not judged
            entry.notes.append(f"the history before it could not be read ({exc})")
        else:
            entry.before = list(before.messages)
            kept_texts = {_text(item) for item in kept_items}
            entry.kept_messages = [
                m for m in entry.before if m.role == "user" and m.text() in kept_texts
            ]
            if kept_items:
                entry.notes.append(
                    f"it carried {count(len(kept_items), 'user message')} over verbatim"
                )
        out.append(entry)
    return out

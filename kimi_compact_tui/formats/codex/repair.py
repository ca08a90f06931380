"""Repair of Codex's own compaction: its ``compacted`` record, rewritten in place.

Codex resumes from the latest ``compacted`` record's ``replacement_history``,
whose last item is the summary as a user message (the same text as the
record's ``message``). A repair puts the given text in both, keeps every other
field and every other byte of the rollout, and writes the record as Codex
writes its records (compact JSON, UTF-8). Codex's UI projection has read past
that record, so it is forgotten afterwards (the format's ``after_restore``)
and Codex rebuilds it from the rollout.
"""

from __future__ import annotations

import json
from typing import Any

from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.codex.state import CodexState
from kimi_compact_tui.formats.context import table
from kimi_compact_tui.formats.ledger import Compaction


def _with_text(item: Any, old: str, text: str) -> Any:
    content = table(item).get("content")
    if not isinstance(content, list):
        return item
    parts = [dict(c, text=text) if table(c).get("text") == old else c for c in content]
    return dict(item, content=parts)


def repaired(session: Session, compaction: Compaction, summary: str) -> bytes:
    state = session.format_state
    if not isinstance(state, CodexState) or compaction.offset is None:
        raise ApplyError(f"{session.path}: not a Codex rollout as loaded")
    data = state.data
    pos = compaction.offset
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        try:
            record = json.loads(data[pos:end])
        except ValueError:
            record = None
        if isinstance(record, dict) and record.get("type") == "compacted":
            break
        pos = end + 1
    else:
        raise ApplyError(f"{session.path}: the compaction has no compacted record to repair")
    payload = dict(table(record.get("payload")))
    old = payload.get("message")
    if not isinstance(old, str) or old != compaction.summary:
        raise ApplyError(f"{session.path}: the compacted record is not the one read")
    payload["message"] = summary
    history = payload.get("replacement_history")
    if isinstance(history, list):
        payload["replacement_history"] = [_with_text(item, old, summary) for item in history]
    record = dict(record, payload=payload)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return data[:pos] + line + data[end:]

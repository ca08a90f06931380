"""Repair of Claude Code's own compaction: its summary message, rewritten in place.

The summary Claude Code resumes from is the ``isCompactSummary`` user record
after a ``compact_boundary``. A repair replaces that record's text with the
given one (the agent's summary plus the anchor block of what it lost), keeps
every other field and every other byte of the transcript, and writes the
record as Claude Code writes its records (``JSON.stringify``: compact, UTF-8).
"""

from __future__ import annotations

import json
from typing import Any

from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.claude_code.state import ClaudeState
from kimi_compact_tui.formats.ledger import Compaction


def _with_text(content: Any, text: str) -> Any:
    if isinstance(content, str):
        return text
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if len(blocks) == 1:
            return [dict(b, text=text) if b is blocks[0] else b for b in content]
    raise ApplyError("the summary record holds no single text to repair")


def repaired(session: Session, compaction: Compaction, summary: str) -> bytes:
    state = session.format_state
    if not isinstance(state, ClaudeState) or compaction.offset is None:
        raise ApplyError(f"{session.path}: not a Claude Code transcript as loaded")
    records = state.records
    at = next((i for i, r in enumerate(records) if r.start == compaction.offset), None)
    if at is None:
        raise ApplyError(f"{session.path}: the compaction is not where it was read")
    target = next(
        (r for r in records[at + 1 : at + 6] if r.obj.get("isCompactSummary") is True), None
    )
    if target is None:
        raise ApplyError(f"{session.path}: the compaction has no summary record to repair")
    obj = dict(target.obj)
    message = dict(obj.get("message") or {})
    message["content"] = _with_text(message.get("content"), summary)
    obj["message"] = message
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, as JSON.stringify does
        line = json.dumps(obj, separators=(",", ":")).encode("ascii")
    return state.data[: target.start] + line + state.data[target.end :]

"""The record a compaction appends to a Codex rollout.

One ``compacted`` record, in Codex's own line shape (compact JSON, UTF-8)::

    {"timestamp":T,"ordinal":N,"type":"compacted",
     "payload":{"message":S,"replacement_history":[SUMMARY, *KEPT]}}

- ``T``: now, UTC, milliseconds (Codex ignores a record with no timestamp).
- ``N``: one past the highest ordinal, only when the rollout numbers its
  records (Codex refuses to resume a numbered rollout whose last record has none).
- ``S``: the spec's summary message text; ``SUMMARY`` is a user message
  holding the same text; ``KEPT`` are the kept history items exactly as read.
  Codex's own context (its developer instructions, the environment) is not
  written: Codex shows it again itself after a compaction.
- When the file does not end with ``\\n``, the record starts on a new line.

Undo cuts the file back to its length before this record (the store does it,
only while the file still ends with exactly these bytes).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from kimi_compact_tui.formats.codex.rollout import TAIL_NEWLINE
from kimi_compact_tui.formats.codex.state import CodexState
from kimi_compact_tui.formats.isotime import iso_ms


def summary_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def compacted_record(
    state: CodexState, text: str, kept: list[dict[str, Any]], now: datetime | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {"timestamp": iso_ms(now)}
    if state.paginated:
        record["ordinal"] = 0 if state.max_ordinal is None else state.max_ordinal + 1
    record["type"] = "compacted"
    record["payload"] = {"message": text, "replacement_history": [summary_item(text), *kept]}
    return record


def encode(record: dict[str, Any], state: CodexState) -> bytes:
    try:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from a \u escape: keep it escaped
        line = json.dumps(record, separators=(",", ":")).encode("ascii")
    lead = b"" if state.tail == TAIL_NEWLINE or not state.data else b"\n"
    return lead + line + b"\n"

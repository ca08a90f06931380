"""The record a compaction appends to a Gemini CLI session.

One line, written the way Gemini CLI writes (``JSON.stringify``: compact, UTF-8
kept)::

    {"$set":{"messages":[SUMMARY, *KEPT],"lastUpdated":"<ISO time>"}}

``SUMMARY`` is a ``user`` message (``{id, timestamp, type: "user", content:
[{"text": ...}]}``) holding the spec's summary text, with no acknowledgement after
it; ``KEPT`` are the message records from the first kept message on, copied as
loaded (same ids). On resume Gemini CLI replaces its whole message list with this
one, so it sends its own prefix, the summary, then the kept messages.
``lastUpdated`` makes this file the one ``--resume <id>`` picks among files of the
same session; the header's ``sessionId`` is left as it is. Earlier bytes never
change, so undo cuts the file back to its loaded length.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from kimi_compact_tui.errors import ApplyError
from kimi_compact_tui.formats.gemini_cli.state import GeminiState
from kimi_compact_tui.formats.isotime import iso_ms
from kimi_compact_tui.formats.jsvalue import js_stringify


def summary_record(text: str, now: datetime | None = None, new_id: Any = None) -> dict[str, Any]:
    return {
        "id": str(new_id() if new_id is not None else uuid.uuid4()),
        "timestamp": iso_ms(now),
        "type": "user",
        "content": [{"text": text}],
    }


def boundary_refusal(state: GeminiState, boundary: int) -> str | None:
    """Why the kept messages cannot start at ``boundary``: a model reply and its
    tool results are one record, which is kept or dropped whole."""
    if 0 < boundary < len(state.owners) and state.owners[boundary - 1] == state.owners[boundary]:
        return (
            f"messages {boundary} and {boundary + 1} are one Gemini CLI record (a reply and "
            "its tool results), kept or compacted together; choose a boundary between records"
        )
    return None


def kept_records(state: GeminiState, boundary: int) -> list[dict[str, Any]]:
    """The records of the messages from ``boundary`` on (ApplyError when the
    boundary falls inside a record)."""
    refusal = boundary_refusal(state, boundary)
    if refusal:
        raise ApplyError(refusal)
    if boundary >= len(state.owners):
        return []
    return list(state.records[state.owners[boundary] :])


def compaction_record(
    state: GeminiState,
    boundary: int,
    summary_text: str,
    *,
    now: datetime | None = None,
    new_id: Any = None,
) -> dict[str, Any]:
    summary = summary_record(summary_text, now, new_id)
    return {
        "$set": {
            "messages": [summary, *kept_records(state, boundary)],
            "lastUpdated": iso_ms(now),
        }
    }


def encode(state: GeminiState, record: dict[str, Any]) -> bytes:
    """The bytes to append: one line (after a line end when the file lacks one)."""
    line = (js_stringify(record) + "\n").encode("utf-8")
    return (b"\n" + line) if state.torn else line

"""The records a compaction appends to a Claude Code transcript.

In order, each one line of compact JSON (Claude Code's own key order:
``parentUuid`` first, ``uuid`` before ``timestamp`` where the agent writes them so)::

    system  compact_boundary   parentUuid null, logicalParentUuid = the old leaf,
                               compactMetadata {trigger: "manual", preTokens}
    <copies of the records of the leading system messages, if any>
    user    isCompactSummary   the spec's summary message (one text)
    <copies of the records of the kept messages, in history order>

A compact boundary starts the history Claude Code resumes, and the last record
written becomes its leaf. The copies get new ``uuid`` values chained through
``parentUuid`` (a tool result's ``sourceToolAssistantUUID`` follows its call's
copy), and copied replies get a new ``message.id`` (one per original id): with
the old id the agent would also pull in the original records and send the reply
twice. Everything else in a copy is the original's, its timestamp included.
Earlier bytes of the file are never changed.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kimi_compact_tui.formats.claude_code.records import TAIL_UNTERMINATED, Record
from kimi_compact_tui.formats.claude_code.state import ClaudeState
from kimi_compact_tui.formats.isotime import iso_ms

ENVELOPE_KEYS = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")
BOUNDARY_TEXT = "Conversation compacted (kimi-compact-tui)"


def split_positions(state: ClaudeState, leading: int, boundary: int) -> tuple[list[int], list[int]]:
    """The chain positions to copy: those of the leading system messages
    (``[0, leading)``) and those of the kept messages (``[boundary, n)``). A
    record that makes no message of its own goes with the next one that does."""
    owners = list(state.owners)
    resolved = [-1] * len(owners)
    following = max((o for o in owners if o >= 0), default=-1)
    for position in range(len(owners) - 1, -1, -1):
        if owners[position] >= 0:
            following = owners[position]
        resolved[position] = following
    lead = [p for p, owner in enumerate(owners) if 0 <= owner < leading]
    kept = [p for p, owner in enumerate(resolved) if owner >= boundary]
    return lead, kept


class _Copier:
    def __init__(self, new_uuid: Callable[[], str]) -> None:
        self.new_uuid = new_uuid
        self.uuids: dict[str, str] = {}
        self.ids: dict[Any, str] = {}

    def copy(self, rec: Record, parent: str) -> dict[str, Any]:
        fresh = self.new_uuid()
        if rec.uuid is not None:
            self.uuids[rec.uuid] = fresh
        out: dict[str, Any] = {"parentUuid": parent}
        for key, value in rec.obj.items():
            if key == "parentUuid":
                continue
            if key == "uuid":
                value = fresh
            elif key == "sourceToolAssistantUUID" and type(value) is str:
                value = self.uuids.get(value, value)
            elif key == "message" and rec.kind == "assistant" and type(value) is dict:
                old = value.get("id")
                if old is not None:
                    if old not in self.ids:
                        self.ids[old] = f"msg_kct_{self.new_uuid().replace('-', '')}"
                    value = {**value, "id": self.ids[old]}
            out[key] = value
        return out


def compaction_records(
    state: ClaudeState,
    *,
    leading: int,
    boundary: int,
    summary_text: str,
    pre_tokens: int,
    now: datetime | None = None,
    new_uuid: Callable[[], str] | None = None,
) -> list[dict[str, Any]]:
    """The records to append for a compaction keeping messages ``[0, leading)``
    and ``[boundary, n)`` around the summary."""
    make = new_uuid or (lambda: str(uuidlib.uuid4()))
    leaf = state.leaf_record()
    if leaf is None:
        raise ValueError("the transcript has no history to compact")
    envelope = {k: leaf.obj[k] for k in ENVELOPE_KEYS if k in leaf.obj}
    stamp = iso_ms(now)
    head = make()
    out: list[dict[str, Any]] = [
        {
            "parentUuid": None,
            "logicalParentUuid": leaf.uuid,
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": BOUNDARY_TEXT,
            "isMeta": False,
            "timestamp": stamp,
            "uuid": head,
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": pre_tokens},
            **envelope,
        }
    ]
    lead, kept = split_positions(state, leading, boundary)
    copier = _Copier(make)
    parent = head
    for position in lead:
        out.append(copier.copy(state.records[state.chain[position]], parent))
        parent = out[-1]["uuid"]
    summary_uuid = make()
    out.append(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": summary_text},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": summary_uuid,
            "timestamp": stamp,
            **envelope,
        }
    )
    parent = summary_uuid
    for position in kept:
        out.append(copier.copy(state.records[state.chain[position]], parent))
        parent = out[-1]["uuid"]
    return out


def encode_records(state: ClaudeState, records: list[dict[str, Any]]) -> bytes:
    """The bytes to append: one ``JSON.stringify``-like line per record (after a
    line end when the file's last line has none)."""
    lines = []
    for record in records:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        try:
            lines.append(text.encode("utf-8") + b"\n")
        except UnicodeEncodeError:  # a lone surrogate: escaped, as JSON.stringify does
            lines.append(json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n")
    data = b"".join(lines)
    return b"\n" + data if state.tail == TAIL_UNTERMINATED else data

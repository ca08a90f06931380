"""The rows of opencode's own compaction, carrying a given summary: built, not written.

opencode compacts by appending two message rows to the session:

1. a ``user`` row (the session's agent and model) with one part ``{"type":
   "compaction", "auto": false, "tail_start_id": <first kept message>}``;
2. an ``assistant`` row with ``"mode"`` and ``"agent"`` ``"compaction"``, ``"summary":
   true``, ``parentID`` the user row and ``finish`` set, whose text part is the
   summary (between a step start and a step finish, as opencode writes it).

opencode only honours such a pair when it comes after every other message of the
session (it loads ``ORDER BY time_created, id``), when ``tail_start_id`` names one of
its messages, ``parentID`` the user row, and ``finish`` is set (without it opencode
compacts again by itself). So the new rows' ``time_created`` and ids are taken above
every existing row of the session (messages and parts), not only from the clock.

Ids are a prefix (``msg_``, ``prt_``), 12 hex digits (milliseconds times 4096 plus a
counter, the low 48 bits) and 14 random letters and digits: they sort by time.
"""

from __future__ import annotations

import json
import random
import secrets
import string
import time
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.opencode.db import SessionRows
from kimi_compact_tui.formats.opencode.history import as_dict

MESSAGE_COLUMNS = ("id", "session_id", "time_created", "time_updated", "data")
PART_COLUMNS = ("id", "message_id", "session_id", "time_created", "time_updated", "data")
STAMP_BITS = 48
RANDOM_CHARS = string.ascii_letters + string.digits
RANDOM_LENGTH = 14
ZERO_TOKENS = {
    "total": 0,
    "input": 0,
    "output": 0,
    "reasoning": 0,
    "cache": {"write": 0, "read": 0},
}


def to_json(value: Any) -> str:
    """JSON as opencode stores it (JavaScript's JSON.stringify: no spaces)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def id_stamp(row_id: str) -> int | None:
    """The 48-bit time-and-counter stamp of an ascending id (``msg_``, ``prt_``, ...)."""
    _, sep, rest = row_id.partition("_")
    digits = rest[:12]
    if not sep or len(digits) != 12:
        return None
    try:
        return int(digits, 16)
    except ValueError:
        return None


def make_id(prefix: str, stamp: int, rng: random.Random | None = None) -> str:
    if not 0 <= stamp < 1 << STAMP_BITS:
        raise ValueError(f"id stamp {stamp} is out of range")
    choice = rng.choice if rng is not None else secrets.choice
    tail = "".join(choice(RANDOM_CHARS) for _ in range(RANDOM_LENGTH))
    return f"{prefix}_{stamp:012x}{tail}"


@dataclass(frozen=True)
class CompactionRows:
    """The new rows, as column values: two messages, then their parts."""

    messages: tuple[dict[str, Any], ...]
    parts: tuple[dict[str, Any], ...]

    @property
    def user_id(self) -> str:
        return str(self.messages[0]["id"])

    @property
    def summary_id(self) -> str:
        return str(self.messages[1]["id"])

    def statements(self) -> list[tuple[str, tuple[Any, ...]]]:
        """``INSERT`` statements and their parameters, messages first (a part's
        message must exist first), for the caller's own transaction."""
        out: list[tuple[str, tuple[Any, ...]]] = []
        for table, columns, rows in (
            ("message", MESSAGE_COLUMNS, self.messages),
            ("part", PART_COLUMNS, self.parts),
        ):
            sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
            out.extend((sql, tuple(row[c] for c in columns)) for row in rows)
        return out

    def undo_statements(self) -> list[tuple[str, tuple[Any, ...]]]:
        """``DELETE`` statements removing exactly these rows (parts first)."""
        return [("DELETE FROM part WHERE id = ?", (str(r["id"]),)) for r in self.parts] + [
            ("DELETE FROM message WHERE id = ?", (str(r["id"]),)) for r in self.messages
        ]


def export_rows(rows: SessionRows) -> dict[str, Any]:
    """One session's own rows as a JSON-able object (a backup of that session only,
    never of the database): its message rows, each with its part rows, as stored."""
    return {
        "session_id": rows.session.id,
        "fingerprint": rows.fingerprint(),
        "messages": [
            {
                **{c: getattr(m, c) for c in MESSAGE_COLUMNS if c != "data"},
                "data": m.raw,
                "parts": [
                    {**{c: getattr(p, c) for c in PART_COLUMNS if c != "data"}, "data": p.raw}
                    for p in m.parts
                ],
            }
            for m in rows.messages
        ],
    }


def _latest(rows: SessionRows, role: str) -> dict[str, Any]:
    for message in reversed(rows.messages):
        if message.role == role:
            return message.data
    return {}


def build_compaction(
    rows: SessionRows,
    summary: str,
    tail_start_id: str | None,
    *,
    now_ms: int | None = None,
    rng: random.Random | None = None,
) -> CompactionRows:
    """The two rows of opencode's own compaction for this session: ``summary`` as the
    summary, ``tail_start_id`` the first message row kept (None: none kept)."""
    session_id = rows.session.id
    if tail_start_id is not None and rows.message(tail_start_id) is None:
        raise ValueError(f"tail_start_id {tail_start_id!r} names no message of {session_id}")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    times = [m.time_created for m in rows.messages] + [
        p.time_created for m in rows.messages for p in m.parts
    ]
    created = max([now] + [t + 1 for t in times])
    stamps = [id_stamp(m.id) for m in rows.messages] + [
        id_stamp(p.id) for m in rows.messages for p in m.parts
    ]
    stamp = max([(now * 4096) % (1 << STAMP_BITS)] + [s + 1 for s in stamps if s is not None])

    def next_id(prefix: str) -> str:
        nonlocal stamp
        made = make_id(prefix, stamp, rng)
        stamp += 1
        return made

    user = _latest(rows, "user")
    assistant = _latest(rows, "assistant")
    model = as_dict(user.get("model"))
    provider_id = assistant.get("providerID") or model.get("providerID")
    model_id = assistant.get("modelID") or model.get("modelID")
    path = assistant.get("path")
    if not isinstance(path, dict):
        path = {"cwd": rows.session.directory, "root": "/"}

    t_user, t_summary = created, created + 1
    user_id = next_id("msg")
    compaction: dict[str, Any] = {"type": "compaction", "auto": False}
    if tail_start_id is not None:
        compaction["tail_start_id"] = tail_start_id
    user_part_id = next_id("prt")
    summary_id = next_id("msg")
    part_ids = [next_id("prt") for _ in range(3)]

    user_data: dict[str, Any] = {"role": "user", "time": {"created": t_user}}
    if user.get("agent") is not None:
        user_data["agent"] = user["agent"]
    if model:
        user_data["model"] = {
            "providerID": model.get("providerID"),
            "modelID": model.get("modelID"),
        }
    summary_data: dict[str, Any] = {
        "role": "assistant",
        "parentID": user_id,
        "mode": "compaction",
        "agent": "compaction",
        "summary": True,
        "path": path,
        "cost": 0,
        "tokens": ZERO_TOKENS,
        "modelID": model_id,
        "providerID": provider_id,
        "time": {"created": t_summary, "completed": t_summary},
        "finish": "stop",
    }
    summary_parts: list[dict[str, Any]] = [
        {"type": "step-start"},
        {"type": "text", "text": summary, "time": {"start": t_summary, "end": t_summary}},
        {"reason": "stop", "type": "step-finish", "tokens": ZERO_TOKENS, "cost": 0},
    ]

    def message_row(row_id: str, t: int, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": row_id, "session_id": session_id, "time_created": t, "time_updated": t,
            "data": to_json(data),
        }  # fmt: skip

    def part_row(row_id: str, message_id: str, t: int, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": row_id, "message_id": message_id, "session_id": session_id,
            "time_created": t, "time_updated": t, "data": to_json(data),
        }  # fmt: skip

    return CompactionRows(
        messages=(
            message_row(user_id, t_user, user_data),
            message_row(summary_id, t_summary, summary_data),
        ),
        parts=(part_row(user_part_id, user_id, t_user, compaction),)
        + tuple(
            part_row(pid, summary_id, t_summary, data)
            for pid, data in zip(part_ids, summary_parts, strict=True)
        ),
    )

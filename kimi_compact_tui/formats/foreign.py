"""Files that are not a session this tool opens, though they look like one.

They would otherwise be taken for OpenAI ``.jsonl`` and fail on their first
line with a confusing field error; instead the error says what the file is:

- kimi-cli's ``wire.jsonl`` is its UI event log, not a history: the history
  is the ``context.jsonl`` beside it, named in the error (kimi-cli 1.51 starts
  the log with a ``metadata`` record holding only ``protocol_version``, then
  ``timestamp`` + ``message`` records; older logs start with the latter);
- a Kimi Code journal the kimi-code format did not take (its first record
  lacks kimi-code's ``created_at``) is named as such.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KIMI_CLI_HISTORY = "context.jsonl"


def _kimi_cli_event(rec: dict[str, Any]) -> bool:
    msg = rec.get("message")
    return "timestamp" in rec and isinstance(msg, dict) and "type" in msg


def _metadata(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "metadata" and isinstance(rec.get("protocol_version"), str)


def _kimi_code_record(rec: dict[str, Any]) -> bool:
    return isinstance(rec.get("type"), str) and ("time" in rec or "agentId" in rec)


def first_records(head: bytes, n: int = 5) -> list[dict[str, Any]]:
    """The first ``n`` records of ``head`` while they are JSON objects (a line
    that is not one ends the list)."""
    records: list[dict[str, Any]] = []
    for raw in head.split(b"\n"):
        if len(records) == n:
            break
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            break
        if not isinstance(rec, dict):
            break
        records.append(rec)
    return records


def _is_kimi_cli_event_log(records: list[dict[str, Any]]) -> bool:
    if not records:
        return False
    if _kimi_cli_event(records[0]):
        return True
    if not _metadata(records[0]) or "created_at" in records[0]:
        return False
    rest = records[1:]
    return any(_kimi_cli_event(r) for r in rest) or not any(_kimi_code_record(r) for r in rest)


def refusal(path: Path, head: bytes) -> str | None:
    """The one-line error for the file at ``path`` (first bytes ``head``) when
    it is a known kind this tool does not open, else None."""
    records = first_records(head)
    if _is_kimi_cli_event_log(records):
        history = path.with_name(KIMI_CLI_HISTORY)
        where = (
            f"open {history}"
            if history.is_file()
            else f"there is no {KIMI_CLI_HISTORY} beside it to open"
        )
        return (
            f"{path}: this is kimi-cli's wire.jsonl, its UI event log, not a conversation "
            f"history (kimi-cli keeps that in {KIMI_CLI_HISTORY}); {where}"
        )
    if records and _metadata(records[0]):
        return (
            f"{path}:1: this looks like a Kimi Code wire.jsonl, but its metadata record is not "
            "kimi-code's (no created_at time)"
        )
    return None

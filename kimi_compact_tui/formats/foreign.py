"""Files that are agent sessions of a kind this tool cannot open yet.

They would otherwise be taken for OpenAI ``.jsonl`` and fail on their first
line with a confusing field error; instead the error says what the file looks
like. Each entry: a name, and a test on the decoded first record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _kimi_cli_wire(rec: dict[str, Any]) -> bool:
    msg = rec.get("message")
    return "timestamp" in rec and isinstance(msg, dict) and "type" in msg


def _claude_code(rec: dict[str, Any]) -> bool:
    return "sessionId" in rec and ("parentUuid" in rec or "uuid" in rec or "leafUuid" in rec)


def _kimi_code_wire(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "metadata" and "protocol_version" in rec


KNOWN: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
    ("a kimi-cli wire.jsonl (the UI event log; open the context.jsonl beside it)", _kimi_cli_wire),
    ("a Claude Code transcript", _claude_code),
    ("a Kimi Code wire.jsonl", _kimi_code_wire),
]


def identify(head: bytes) -> str | None:
    """What the file whose first bytes are ``head`` looks like, when it is a
    known session kind this tool does not open; else None."""
    for raw in head.split(b"\n")[:5]:
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if not isinstance(rec, dict):
            return None
        for what, test in KNOWN:
            if test(rec):
                return what
        return None
    return None

"""The records a compaction appends to a kimi-code journal, and the checks
that make appending and undoing safe.

Four records, in kimi-code's own order and shape (``type`` first, then the
payload, then ``time`` in milliseconds; compact JSON, UTF-8 kept)::

    {"type":"full_compaction.begin","source":"manual","agentId":A,"time":T}
    {"type":"context.apply_compaction","agentId":A,"summary":S,"contextSummary":C,
     "compactedCount":N,"tokensBefore":B,"tokensAfter":F,"summaryOutputTokens":O,
     "legacyTail":true,"time":T}
    {"type":"token_counting.rebased","agentId":A,"length":L,"tokens":F,"measured":false,"time":T}
    {"type":"full_compaction.complete","agentId":A,"time":T}

``legacyTail: true`` and no ``keptUserMessageCount``: kimi-code 2.1 then
resumes ``[C as one user message, *history[N:]]``, exactly the kept messages
this tool chose (with ``keptUserMessageCount`` it would re-select the user
messages itself). ``L`` is the number of context messages after the
compaction (``1 + kept``).
"""

from __future__ import annotations

import time
from typing import Any

from kimi_compact_tui.formats.jsvalue import js_stringify


def compaction_records(
    *,
    agent_id: str,
    summary: str,
    context_summary: str,
    compacted_count: int,
    tokens_before: int,
    tokens_after: int,
    summary_output_tokens: int | None,
    length: int,
    time_ms: int | None = None,
) -> list[dict[str, Any]]:
    now = int(time.time() * 1000) if time_ms is None else time_ms
    apply: dict[str, Any] = {
        "type": "context.apply_compaction",
        "agentId": agent_id,
        "summary": summary,
        "contextSummary": context_summary,
        "compactedCount": compacted_count,
        "tokensBefore": tokens_before,
        "tokensAfter": tokens_after,
    }
    if summary_output_tokens is not None:
        apply["summaryOutputTokens"] = summary_output_tokens
    apply["legacyTail"] = True
    apply["time"] = now
    return [
        {"type": "full_compaction.begin", "source": "manual", "agentId": agent_id, "time": now},
        apply,
        {
            "type": "token_counting.rebased",
            "agentId": agent_id,
            "length": length,
            "tokens": tokens_after,
            "measured": False,
            "time": now,
        },
        {"type": "full_compaction.complete", "agentId": agent_id, "time": now},
    ]


def encode_records(records: list[dict[str, Any]]) -> bytes:
    """Records as kimi-code writes them: ``JSON.stringify(record) + "\\n"``."""
    return b"".join(js_stringify(r).encode("utf-8") + b"\n" for r in records)

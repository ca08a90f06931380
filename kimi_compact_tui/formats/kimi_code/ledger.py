"""Kimi Code's ledger: each ``context.apply_compaction`` record of the journal's agent.

kimi-code 2.1 appends its compaction to ``wire.jsonl`` and keeps every record
before it: ``full_compaction.begin`` (``source``: ``manual`` for ``/compact``,
``auto`` for its own), ``context.apply_compaction`` (the model's ``summary``,
the ``contextSummary`` it resumes, ``compactedCount``, ``tokensBefore`` and
``tokensAfter``, ``time`` in milliseconds, and for its own ``/compact``
``keptUserMessageCount``: the user messages it carries over verbatim), then
``token_counting.rebased`` and ``full_compaction.complete``. So the history it
had before each compaction is read back by folding the journal up to the
compaction's first record; the messages it kept are the history's tail from
``compactedCount`` (the legacy-tail form this tool writes) or, for kimi-code's
own, the user messages of that history found again, verbatim, in the history
right after it. Records of an undone
branch are listed as the file holds them.
"""

from __future__ import annotations

import time
from typing import Any

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.context import whole
from kimi_compact_tui.formats.kimi_code.plugin import KimiCodeState
from kimi_compact_tui.formats.kimi_code.usage import agent_of
from kimi_compact_tui.formats.ledger import Compaction, parse_bytes
from kimi_compact_tui.fsutil import json_lines
from kimi_compact_tui.wording import count as counted

BEGIN = b'"full_compaction.begin"'
APPLY = b'"context.apply_compaction"'


def _iso(ms: Any) -> str | None:
    if type(ms) not in (int, float) or ms < 0:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{int(ms) % 1000:03d}Z"


def compactions(session: Session) -> list[Compaction]:
    path = session.path
    state = session.format_state
    if path is None or not isinstance(state, KimiCodeState):
        return []
    data = state.journal
    agent = agent_of(path)
    out: list[Compaction] = []
    begin: tuple[int, str | None] | None = None  # the open compaction's start and source
    for start, end, record in json_lines(data, (BEGIN, APPLY)):
        if record.get("agentId", agent) != agent:
            continue
        if record.get("type") == "full_compaction.begin":
            source = record.get("source")
            begin = (start, source if isinstance(source, str) else None)
            continue
        if record.get("type") != "context.apply_compaction":
            continue
        offset, trigger = begin if begin is not None else (start, None)
        begin = None
        summary = record.get("contextSummary")
        if not isinstance(summary, str):
            summary = record.get("summary") if isinstance(record.get("summary"), str) else None
        entry = Compaction(
            time=_iso(record.get("time")),
            trigger=trigger,
            summary=summary,
            tokens_before=whole(record.get("tokensBefore")),
            tokens_after=whole(record.get("tokensAfter")),
            offset=offset,
        )
        try:
            before = parse_bytes(session.format, data[:offset], path)
            after = parse_bytes(session.format, data[:end], path)
        except Exception as exc:  # noqa: BLE001 - the history before is then not judged
            entry.notes.append(f"the history before it could not be read ({exc})")
        else:
            entry.before = list(before.messages)
            kept_users = whole(record.get("keptUserMessageCount"))
            count = record.get("compactedCount")
            if record.get("legacyTail") is True or kept_users is None:
                # [summary, *history[compactedCount:]]: the tail is kept as it was
                cut = int(count) if isinstance(count, int | float) else len(entry.before)
                entry.kept_messages = entry.before[max(0, cut) :]
            else:  # kimi-code's own: the user messages it carried over, found again after
                carried = {m.text() for m in after.messages if m.role == "user"}
                entry.kept_messages = [
                    m for m in entry.before if m.role == "user" and m.text() in carried
                ]
                entry.notes.append(
                    f"it carried {counted(kept_users, 'user message')} over verbatim"
                )
        out.append(entry)
    return out

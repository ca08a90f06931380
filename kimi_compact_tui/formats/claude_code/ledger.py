"""Claude Code's ledger: each ``compact_boundary`` record in the transcript.

Claude Code keeps every record before a boundary, so the messages it had before
each compaction are read back by parsing the transcript up to that record (what
it would have resumed then). The summary is the ``isCompactSummary`` record
after the boundary; ``compactMetadata`` gives the trigger and ``preTokens``
(and ``postTokens`` where recorded); ``preservedMessages`` names the records it
kept verbatim after the summary (Claude Code 2.1.197 keeps the last reply).
"""

from __future__ import annotations

from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.claude_code.state import ClaudeState
from kimi_compact_tui.formats.context import table, whole
from kimi_compact_tui.formats.ledger import Compaction, parse_bytes


def _summary_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return None


def compactions(session: Session) -> list[Compaction]:
    state = session.format_state
    if not isinstance(state, ClaudeState) or session.path is None:
        return []
    records = state.records
    out: list[Compaction] = []
    for i, rec in enumerate(records):
        obj = rec.obj
        if rec.kind != "system" or obj.get("subtype") != "compact_boundary":
            continue
        meta = table(obj.get("compactMetadata"))
        summary = None
        for later in records[i + 1 : i + 6]:
            if later.obj.get("isCompactSummary") is True:
                summary = _summary_text(later.message.get("content"))
                break
        entry = Compaction(
            time=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
            trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
            summary=summary,
            tokens_before=whole(meta.get("preTokens")),
            tokens_after=whole(meta.get("postTokens")),
            offset=rec.start,
        )
        try:
            before = parse_bytes(session.format, state.data[: rec.start], session.path)
        except Exception as exc:  # noqa: BLE001 - the history before is then not judged
            entry.notes.append(f"the messages before it could not be read ({exc})")
        else:
            entry.before = list(before.messages)
            kept = table(meta.get("preservedMessages")).get("uuids")
            prior = before.format_state
            if isinstance(kept, list) and kept and isinstance(prior, ClaudeState):
                uuids = set(kept)
                indices = sorted(
                    {
                        prior.owners[p]
                        for p, r in enumerate(prior.chain)
                        if prior.records[r].uuid in uuids and prior.owners[p] >= 0
                    }
                )
                entry.kept_messages = [entry.before[j] for j in indices]
        out.append(entry)
    return out

"""``context.apply_compaction`` as kimi-code 2.1 folds it.

Legacy-tail form (no ``keptUserMessageCount``, or ``legacyTail: true``): the
history becomes ``[summary message, *history[compactedCount:]]``, the summary
message being one user text part, ``contextSummary`` (else ``summary``).

Kept-user form (kimi-code's own ``/compact``): kimi-code re-selects the real
user messages of the whole history (at most 20,000 estimated tokens: all of
them when they fit, else the first 2,000 and the last 18,000, cut at
characters, with an elision note between), then the summary message, then a
continuation note. The two notes are kimi-code's own text; here they are
placeholders of ours (marked ``synthetic``): same place, same count.
"""

from __future__ import annotations

import math
from typing import Any

from kimi_compact_tui.errors import SessionFormatError
from kimi_compact_tui.formats.jsvalue import js_slice_start, js_stringify

MAX_KEPT_USER_TOKENS = 20_000
HEAD_USER_TOKENS = 2_000
MEDIA_TOKENS = 2_000
ELISION_NOTE = "(kimi-code's note: user messages between here and the next ones were omitted)"
CONTINUATION_NOTE = "(kimi-code's note: compaction is complete, continue the work)"
_OPTIONAL_NUMBERS = (
    "tokensBefore",
    "tokensAfter",
    "summaryOutputTokens",
    "keptUserMessageCount",
    "keptHeadUserMessageCount",
    "droppedCount",
)
_DROPPED_ORIGINS = (
    "injection",
    "shell_command",
    "compaction_summary",
    "system_trigger",
    "task",
    "cron_job",
    "cron_missed",
    "hook_result",
    "retry",
)


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def malformed_compaction(record: dict[str, Any]) -> str | None:
    """Why kimi-code's schema rejects the record, or None."""
    for key in _OPTIONAL_NUMBERS:
        if key in record and not _number(record[key]):
            return f"{key} is not a number"
    if "legacyTail" in record and type(record["legacyTail"]) is not bool:
        return "legacyTail is not a boolean"
    lines = record.get("wireLines")
    if "wireLines" in record:
        if type(lines) is not dict or not all(
            type(lines.get(k)) in (int, float) and lines[k] >= 0 and lines[k] == int(lines[k])
            for k in ("start", "end")
        ):
            return "wireLines is not {start, end}"
    return None if _branch(record) else "no summary with compactedCount"


def _branch(record: dict[str, Any]) -> dict[str, Any] | None:
    """The fields kimi-code keeps (the first schema branch that matches)."""
    compacted = record.get("compactedCount")
    base = {k: record[k] for k in (*_OPTIONAL_NUMBERS, "legacyTail") if k in record}
    # the two compactedCount branches: one summary a string, the other one too when given
    for key, other in (("summary", "contextSummary"), ("contextSummary", "summary")):
        text = record.get(key)
        if (
            type(text) is str
            and _number(compacted)
            and (other not in record or type(record[other]) is str)
        ):
            return {**base, key: text, "compactedCount": compacted, **_opt(record, other)}
    summary = record.get("summary")
    count = record.get("count")
    if _number(count) and ("compactedCount" not in record or _number(compacted)):
        return {**base, "summary": summary, "count": count, **_opt(record, "compactedCount")}
    return None


def _opt(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {key: record[key]} if key in record else {}


def is_context_message(value: Any) -> bool:
    return (
        type(value) is dict
        and type(value.get("role")) is str
        and type(value.get("content")) is list
    )


def summary_message(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "toolCalls": [],
        "origin": {"kind": "compaction_summary"},
    }


def compacted_history(
    history: list[dict[str, Any]], record: dict[str, Any], where: str
) -> list[dict[str, Any]]:
    fields = _branch(record)
    assert fields is not None  # checked by malformed_compaction
    summary = fields.get("summary")
    context_summary = fields.get("contextSummary")
    if type(summary) is str:
        raw_summary = summary
    elif type(context_summary) is str:
        raw_summary = context_summary
    elif is_context_message(summary):
        raw_summary = text_of(summary["content"])  # type: ignore[index]  # is_context_message checked it
    else:
        raise SessionFormatError(
            f"{where}: context.apply_compaction without a summary: kimi-code cannot resume it"
        )
    compacted = fields.get("compactedCount", fields.get("count"))
    kept_count = fields.get("keptUserMessageCount")
    legacy = fields.get("legacyTail")
    if legacy is None:
        legacy = kept_count is None
    text = context_summary if type(context_summary) is str else raw_summary
    if legacy:
        first = summary if is_context_message(summary) else summary_message(text)
        return [first, *history[js_slice_start(compacted, len(history)) :]]  # type: ignore[list-item]  # a context message (checked)
    users = [m for m in history if is_real_user_input(m)]
    head, tail, elided = select_user_messages(users)
    kept = [*head, _note(ELISION_NOTE), *tail] if elided else [*head, *tail]
    return [*kept, summary_message(text), _note(CONTINUATION_NOTE)]


def _note(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "toolCalls": [],
        "origin": {"kind": "injection", "variant": "compaction_note"},
        "synthetic": "kimi-code-note",
    }


def is_real_user_input(message: dict[str, Any]) -> bool:
    if message.get("role") != "user":
        return False
    origin = message.get("origin")
    if origin is None:
        return True
    kind = origin.get("kind") if type(origin) is dict else None
    if kind == "user":
        return True
    if kind in ("skill_activation", "plugin_command"):
        return bool(origin.get("trigger") == "user-slash")
    return False  # the dropped origins and anything unknown


def text_of(content: list[Any]) -> str:
    return "".join(
        p["text"]
        for p in content
        if type(p) is dict and p.get("type") == "text" and type(p.get("text")) is str
    )


def estimate_text(text: str) -> int:
    ascii_count = sum(1 for ch in text if ord(ch) <= 127)
    return math.ceil(ascii_count / 4) + (len(text) - ascii_count)


def estimate_message(message: dict[str, Any]) -> int:
    total = estimate_text(str(message.get("role")))
    for part in message.get("content") or []:
        kind = part.get("type") if type(part) is dict else None
        if kind == "text" and type(part.get("text")) is str:
            total += estimate_text(part["text"])
        elif kind == "think" and type(part.get("think")) is str:
            total += estimate_text(part["think"])
        elif kind in ("image_url", "audio_url", "video_url"):
            total += MEDIA_TOKENS
    for call in message.get("toolCalls") or []:
        if type(call) is dict:
            total += estimate_text(str(call.get("name") or ""))
            args = call.get("arguments")
            total += estimate_text(js_stringify(args))
    return total


def _with_text(message: dict[str, Any], text: str) -> dict[str, Any]:
    return {**message, "content": [{"type": "text", "text": text}], "toolCalls": []}


def _cut_head(text: str, budget: int) -> str:
    if budget <= 0:
        return ""
    ascii_count = other = end = 0
    for ch in text:
        if ord(ch) <= 127:
            ascii_count += 1
        else:
            other += 1
        if math.ceil(ascii_count / 4) + other > budget:
            break
        end += 1
    return text[:end]


def _cut_tail(text: str, budget: int) -> str:
    if budget <= 0:
        return ""
    ascii_count = other = 0
    start = len(text)
    for i in range(len(text) - 1, -1, -1):
        if ord(text[i]) <= 127:
            ascii_count += 1
        else:
            other += 1
        if math.ceil(ascii_count / 4) + other > budget:
            break
        start = i
    return text[start:]


def select_user_messages(users: list[dict[str, Any]]) -> tuple[list[Any], list[Any], bool]:
    """kimi-code's head/tail selection of the kept user messages."""
    total = sum(estimate_message(m) for m in users)
    if total <= MAX_KEPT_USER_TOKENS:
        return [], list(users), False
    head_budget = min(max(HEAD_USER_TOKENS, 0), MAX_KEPT_USER_TOKENS)
    remaining = MAX_KEPT_USER_TOKENS - head_budget
    tail: list[dict[str, Any]] = []
    head_end = len(users)
    dropped_prefix = None
    for i in range(len(users) - 1, -1, -1):
        if remaining <= 0:
            break
        message = users[i]
        tokens = estimate_message(message)
        if tokens <= remaining:
            tail.append(message)
            remaining -= tokens
            head_end = i
            continue
        full = text_of(message["content"])
        suffix = _cut_tail(full, remaining)
        tail.append(_with_text(message, suffix))
        head_end = i
        prefix = full[: len(full) - len(suffix)]
        if prefix:
            dropped_prefix = _with_text(message, prefix)
        break
    tail.reverse()
    candidates = users[:head_end] + ([dropped_prefix] if dropped_prefix is not None else [])
    head: list[dict[str, Any]] = []
    budget = head_budget
    for message in candidates:
        if budget <= 0:
            break
        tokens = estimate_message(message)
        if tokens <= budget:
            head.append(message)
            budget -= tokens
            continue
        head.append(_with_text(message, _cut_head(text_of(message["content"]), budget)))
        break
    return head, tail, True


# JavaScript's String.prototype.trim() whitespace (WhiteSpace and LineTerminator).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_blank(text: str) -> bool:
    return not text.strip(JS_WHITESPACE)


def is_vacuous_part(part: Any) -> bool:
    if type(part) is not dict:
        return False
    kind = part.get("type")
    if kind == "text":
        return type(part.get("text")) is str and js_blank(part["text"])
    if kind == "think":
        return (
            "encrypted" not in part and type(part.get("think")) is str and js_blank(part["think"])
        )
    return False

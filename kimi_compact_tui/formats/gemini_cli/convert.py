"""Gemini turns as this tool's messages.

- A model turn is one ``assistant`` message: text parts, thought parts as
  ``think`` parts (never compaction input; Gemini CLI does not send them either)
  and each ``functionCall`` as a tool call in OpenAI's shape (``arguments`` the
  JSON of its ``args``).
- A user turn becomes, in part order, a ``tool`` message per ``functionResponse``
  (``tool_call_id``, ``name``, its ``output`` or ``error`` text, else the JSON of
  the response) and ``user`` messages of the other parts between them.
- Media (``inlineData``, ``fileData``) become ``image_url`` parts holding a
  reference (``gemini-inline:<mime type>;sha256=<digest of the data>`` or the
  file's URI), never the data. Other parts are kept as ``gemini_part`` parts (not
  text: not compaction input).

Each message remembers the index of the record it comes from (``owners``), so a
boundary between messages maps back to the records to keep.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.gemini_cli.history import Turn
from kimi_compact_tui.formats.gemini_cli.roles import SUMMARY_KEY
from kimi_compact_tui.formats.jsvalue import js_stringify
from kimi_compact_tui.model import Message

MEDIA_KEYS = ("inlineData", "fileData")


@dataclass(frozen=True)
class Mapped:
    messages: tuple[Message, ...]
    owners: tuple[int, ...]  # per message: the index of its record in the loaded list


def media_ref(part: dict[str, Any]) -> str:
    file_data = part.get("fileData")
    uri = file_data.get("fileUri") if isinstance(file_data, dict) else None
    if isinstance(uri, str):
        return uri
    inline_data = part.get("inlineData")
    inline: dict[str, Any] = inline_data if isinstance(inline_data, dict) else {}
    data = inline.get("data")
    digest = (
        hashlib.sha256(data.encode("utf-8", "replace")).hexdigest() if isinstance(data, str) else ""
    )
    return f"gemini-inline:{inline.get('mimeType') or 'application/octet-stream'};sha256={digest}"


def to_part(part: Any) -> dict[str, Any]:
    if not isinstance(part, dict):
        return {"type": "gemini_part", "value": part}
    text = part.get("text")
    if part.get("thought") and isinstance(text, str):
        return {"type": "think", "think": text}
    if isinstance(text, str) and len(part) == 1:
        return {"type": "text", "text": text}
    if any(k in part for k in MEDIA_KEYS):
        return {"type": "image_url", "image_url": {"url": media_ref(part)}}
    if isinstance(text, str):
        return {"type": "text", "text": text}
    return {"type": "gemini_part", "value": part}


def tool_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("args")
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {
            "name": call.get("name"),
            "arguments": js_stringify(args if args is not None else {}),
        },
    }


def response_text(response: Any) -> str:
    if isinstance(response, dict):
        for key in ("output", "error"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def _model(turn: Turn) -> Message:
    parts, calls = [], []
    for part in turn.parts:
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict):
            calls.append(tool_call(call))
        else:
            parts.append(to_part(part))
    data: dict[str, Any] = {"role": "assistant", "content": _content(parts) if parts else ""}
    if calls:
        data["tool_calls"] = calls
    return Message(data)


def _user(turn: Turn, summary: bool = False) -> list[Message]:
    out: list[Message] = []
    pending: list[dict[str, Any]] = []
    mark = {SUMMARY_KEY: {"summary": True}} if summary else {}

    def flush() -> None:
        if pending:
            out.append(Message({"role": "user", "content": _content(list(pending)), **mark}))
            pending.clear()

    for part in turn.parts:
        resp = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(resp, dict):
            flush()
            data = {
                "role": "tool",
                "content": response_text(resp.get("response")),
                "tool_call_id": resp.get("id") if isinstance(resp.get("id"), str) else None,
                "name": resp.get("name") if isinstance(resp.get("name"), str) else None,
            }
            out.append(Message({k: v for k, v in data.items() if v is not None}))
        else:
            pending.append(to_part(part))
    flush()
    return out


def to_messages(turns: list[Turn], summaries: frozenset[int] = frozenset()) -> Mapped:
    """``summaries``: the records that are a compression's summary (their user
    messages are marked as such: the agent's bookkeeping, never a request)."""
    messages: list[Message] = []
    owners: list[int] = []
    for turn in turns:
        made = [_model(turn)] if turn.role == "model" else _user(turn, turn.owner in summaries)
        messages.extend(made)
        owners.extend([turn.owner] * len(made))
    return Mapped(tuple(messages), tuple(owners))


def open_turn(messages: tuple[Message, ...]) -> str | None:
    """Why the history ends mid-turn (a tool call or result the model has not
    answered yet), or None."""
    if not messages:
        return None
    last = messages[-1]
    if last.role == "assistant" and last.tool_calls:
        names = ", ".join(str(c["function"]["name"]) for c in last.tool_calls)
        return f"the last reply calls {names} and has no result"
    if last.role == "tool":
        return "the last tool result has no reply from the model"
    return None

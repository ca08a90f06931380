"""The history's records as this tool's messages, the way Claude Code sends them.

- ``user`` records: ``tool_result`` blocks become ``tool`` messages
  (``tool_call_id``; the result's text and image references), the other blocks one
  ``user`` message after them (a string content stays a string). ``isMeta``
  records (caveats, command echoes) and the compaction summary are user messages
  too: the agent sends them.
- ``assistant`` records of one ``message.id`` become one ``assistant`` message:
  ``text`` parts, ``think`` parts (thinking, never compaction input) and
  ``tool_calls`` in OpenAI's shape. As the agent does, a record joins an earlier
  message of its id across tool results, attachments and other replies; the
  synthetic API-error replies are not sent and not kept here.
- ``attachment`` records become ``system`` messages holding a text rendering of
  the attachment's own fields (the agent renders them its own way). Like the
  agent, which sends them as system messages placed before the next reply, they
  are deferred to just before the next new assistant message (or the end).
- ``system`` records are sent only with subtype ``local_command`` (a ``user``
  message here); the others are kept in the file and not shown.
- Not followed: the agent (with its default model) also moves
  ``<system-reminder>`` text found inside user records into those system
  messages; here it stays in its user message.
- Images become ``image_url`` parts holding a reference (``claude-image:<media
  type>;sha256=<digest>`` of the data, or the image's URL), never the data.

Every message carries ``claude``: what Claude Code knows besides (``meta``,
``compact_summary``, ``attachment``, ``is_error``, ``local_command``); record ids
stay in the format's state, so a kept message and its copy compare equal.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.claude_code.records import Record
from kimi_compact_tui.model import Message

SYNTHETIC_MODEL = "<synthetic>"
SKIPPED_ATTACHMENT_KEYS = ("type", "base64", "data", "signature", "uuid")


@dataclass(frozen=True)
class Mapped:
    messages: tuple[Message, ...]
    owners: tuple[int, ...]  # per chain position: the message it belongs to (-1: none)


def _source(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    return source if isinstance(source, dict) else {}


def image_ref(block: dict[str, Any]) -> str:
    source = _source(block)
    kind = source.get("type")
    url = source.get("url")
    if kind == "url" and isinstance(url, str):
        return url
    if kind == "file" and type(source.get("file_id")) is str:
        return f"claude-file:{source['file_id']}"
    data = source.get("data")
    digest = (
        hashlib.sha256(data.encode("utf-8", "replace")).hexdigest() if type(data) is str else ""
    )
    return f"claude-image:{source.get('media_type') or 'image'};sha256={digest}"


def to_part(block: Any) -> dict[str, Any] | None:
    """One content block as a message part (None: not a part: a tool call)."""
    if type(block) is str:
        return {"type": "text", "text": block}
    if type(block) is not dict:
        return {"type": "claude_block", "value": block}
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text") if type(block.get("text")) is str else ""}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": image_ref(block)}}
    if kind == "thinking":
        text = block.get("thinking")
        return {"type": "think", "think": text if type(text) is str else ""}
    if kind == "redacted_thinking":
        return {"type": "think", "think": "", "redacted": True}
    if kind == "document":
        source = _source(block)
        doc = {"type": "claude_document", "media_type": source.get("media_type")}
        if block.get("title") is not None:
            doc["title"] = block["title"]
        return doc
    if kind == "tool_use":
        return None
    return block  # server tools, web search results, ...: kept, not sent for compaction


def tool_call(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": block.get("id"),
        "type": "function",
        "function": {
            "name": block.get("name"),
            "arguments": json.dumps(block.get("input", {}), ensure_ascii=False),
        },
    }


def render_attachment(attachment: Any) -> str:
    """A plain rendering of an attachment's own fields: its type, then ``key:
    value`` for every text field (nested fields with dotted keys, lists of texts
    one item a line); binary data and numbers are left out."""
    if type(attachment) is not dict:
        return "[attachment]"
    lines = [f"[attachment: {attachment.get('type')}]"]

    def walk(value: Any, key: str) -> None:
        if type(value) is str:
            if value.strip():
                lines.append(f"{key}: {value}")
        elif type(value) is dict:
            for k, v in value.items():
                if k not in SKIPPED_ATTACHMENT_KEYS:
                    walk(v, f"{key}.{k}" if key else k)
        elif type(value) is list:
            texts = [v for v in value if type(v) is str]
            if texts and len(texts) == len(value):
                lines.append(f"{key}:\n" + "\n".join(texts))
            else:
                for i, v in enumerate(value):
                    walk(v, f"{key}[{i}]")

    walk(attachment, "")
    return "\n".join(lines)


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.from_results: list[bool] = []  # a message made from a tool-result record
        self.ids: list[Any] = []  # an assistant message's message.id
        self.pending: list[tuple[int, Message]] = []  # attachments waiting for a reply

    def push(self, message: Message, from_results: bool = False, message_id: Any = None) -> int:
        self.messages.append(message)
        self.from_results.append(from_results)
        self.ids.append(message_id)
        return len(self.messages) - 1

    def flush(self, owners: list[int]) -> None:
        for position, message in self.pending:
            owners[position] = self.push(message)
        self.pending.clear()

    def merge_target(self, message_id: Any) -> int | None:
        """The earlier assistant message this reply's record joins, if any: the
        agent looks back over replies, attachments and tool results."""
        i = len(self.messages) - 1
        while i >= 0:
            m = self.messages[i]
            if m.role == "assistant":
                if self.ids[i] == message_id:
                    return i
                i -= 1
            elif m.role == "system":
                i -= 1
            elif m.role in ("user", "tool"):
                start = i
                while start > 0 and self.messages[start - 1].role in ("user", "tool"):
                    start -= 1
                if not any(self.from_results[start : i + 1]):
                    return None
                i = start - 1
            else:
                return None
        return None


def _meta(rec: Record, **more: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if rec.obj.get("isMeta") is True:
        meta["meta"] = True
    if rec.obj.get("isCompactSummary") is True:
        meta["compact_summary"] = True
    meta.update({k: v for k, v in more.items() if v is not None})
    return meta


def _user(b: _Builder, rec: Record) -> int:
    content = rec.message.get("content")
    if type(content) is not list:
        text = content if type(content) is str else ""
        return b.push(Message({"role": "user", "content": text, "claude": _meta(rec)}))
    first = -1
    rest: list[dict[str, Any]] = []
    results = False
    for block in content:
        if type(block) is dict and block.get("type") == "tool_result":
            results = True
            inner = block.get("content")
            parts = [to_part(x) for x in inner] if type(inner) is list else None
            data: dict[str, Any] = {
                "role": "tool",
                "content": [p for p in parts if p] if parts is not None else (inner or ""),
                "tool_call_id": block.get("tool_use_id"),
                "claude": _meta(rec, is_error=True if block.get("is_error") is True else None),
            }
            index = b.push(Message(data), True)
            first = index if first < 0 else first
        else:
            part = to_part(block)
            if part is not None:
                rest.append(part)
    if rest or first < 0:
        index = b.push(Message({"role": "user", "content": rest, "claude": _meta(rec)}), results)
        first = index if first < 0 else first
    return first


def _assistant(b: _Builder, rec: Record, owners: list[int]) -> int:
    message = rec.message
    message_id = message.get("id")
    content = message.get("content")
    blocks = content if type(content) is list else ([content] if type(content) is str else [])
    parts = [p for p in (to_part(x) for x in blocks) if p is not None]
    calls = [tool_call(x) for x in blocks if type(x) is dict and x.get("type") == "tool_use"]
    target = b.merge_target(message_id)
    if target is not None:
        data = b.messages[target].data
        data["content"].extend(parts)
        if calls:
            data.setdefault("tool_calls", []).extend(calls)
        return target
    b.flush(owners)
    data = {"role": "assistant", "content": parts}
    if calls:
        data["tool_calls"] = calls
    data["claude"] = _meta(rec)
    return b.push(Message(data), message_id=message_id)


def to_messages(records: tuple[Record, ...], chain: tuple[int, ...]) -> Mapped:
    """The messages of the history ``chain`` (record indexes), and for every chain
    position the message it belongs to."""
    b = _Builder()
    owners = [-1] * len(chain)
    for position, index in enumerate(chain):
        rec = records[index]
        kind = rec.kind
        if kind == "user":
            owners[position] = _user(b, rec)
        elif kind == "assistant":
            if rec.obj.get("isApiErrorMessage") is True and rec.message.get("model") == (
                SYNTHETIC_MODEL
            ):
                continue
            owners[position] = _assistant(b, rec, owners)
        elif kind == "attachment":
            att = rec.obj.get("attachment")
            meta = _meta(rec, attachment=att.get("type") if type(att) is dict else None)
            text = render_attachment(att)
            b.pending.append(
                (position, Message({"role": "system", "content": text, "claude": meta}))
            )
        elif kind == "system" and rec.obj.get("subtype") == "local_command":
            said = rec.obj.get("content")
            meta = _meta(rec, local_command=True)
            said = said if isinstance(said, str) else ""
            owners[position] = b.push(Message({"role": "user", "content": said, "claude": meta}))
    b.flush(owners)
    return Mapped(tuple(b.messages), tuple(owners))


def open_turn(messages: tuple[Message, ...] | list[Message]) -> str | None:
    """Why the history ends mid-turn (the last reply's tool call has no result), or None."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    if last is None:
        return None
    answered = {m.tool_call_id for m in messages[last + 1 :] if m.role == "tool"}
    for call in messages[last].tool_calls:
        if call.get("id") not in answered:
            name = (call.get("function") or {}).get("name")
            return f"the last reply's tool call {name} ({call.get('id')}) has no result"
    return None

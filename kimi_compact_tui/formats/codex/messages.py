"""Codex history items as this tool's messages (the spec's OpenAI-shaped messages).

- **The agent's prefix**: the leading run of context messages Codex wrote itself
  (its developer instructions, the environment context) is not history: Codex
  shows it again after a compaction. It is kept out of the messages, like the
  base instructions of ``session_meta`` (``Session.meta.system_prompt``) that Codex
  sends first of all.
- A real user message is a ``user`` message; a prompt only Codex's UI showed
  (never sent: :mod:`.history`) is a ``user`` message marked ``codex.unsent``;
  a developer message or a context
  message later in the history is a ``system`` message (its Codex role under
  ``codex.role``).
- An assistant turn (its reasoning, text and tool calls, in order) is one
  ``assistant`` message: text parts, ``think`` parts for reasoning (never
  compaction input), and ``tool_calls`` ``{"id": call_id, "type": "function",
  "function": {"name", "arguments"}}``. A custom tool's input is its arguments.
- A tool output is a ``tool`` message with ``tool_call_id``; the ``"aborted"``
  output Codex adds for a call it never ran is marked ``codex.synthetic``.
- Images are ``image_url`` parts holding a reference
  (``codex-image:<mime>;sha256=<digest of the data URL>``), never the data.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kimi_compact_tui.formats.codex.history import (
    CALL_TYPES,
    OUTPUT_TYPES,
    HistoryItem,
    as_sent,
    call_id,
    is_codex_summary,
    is_context_message,
)
from kimi_compact_tui.model import Message

IMAGE_REF = "codex-image:"


def image_ref(url: Any) -> str:
    """A reference for an image URL: a data URL becomes ``codex-image:<mime>;sha256=…``."""
    if not isinstance(url, str):
        return IMAGE_REF + "?"
    if not url.startswith("data:"):
        return url
    mime = url[5:].split(";", 1)[0].split(",", 1)[0] or "application/octet-stream"
    return f"{IMAGE_REF}{mime};sha256={hashlib.sha256(url.encode()).hexdigest()}"


def _part(part: Any) -> dict[str, Any]:
    if not isinstance(part, dict):
        return {"type": "codex:value", "value": part}
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind in ("input_image", "image_url"):
        url = part.get("image_url")
        if isinstance(url, dict):
            url = url.get("url")
        return {"type": "image_url", "image_url": {"url": image_ref(url)}}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}
    return {"type": f"codex:{kind}"}


def _content(item: dict[str, Any]) -> list[dict[str, Any]]:
    content = item.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_part(p) for p in content]
    return []


def _output_parts(output: Any) -> list[dict[str, Any]]:
    if isinstance(output, str):
        return [{"type": "text", "text": output}]
    if isinstance(output, list):
        return [_part(p) for p in output]
    if isinstance(output, dict) and "content" in output:
        return _output_parts(output["content"])
    return [{"type": "text", "text": json.dumps(output, ensure_ascii=False)}]


def _think(item: dict[str, Any]) -> dict[str, Any]:
    texts = []
    for key in ("summary", "content"):
        for part in item.get(key) or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return {"type": "think", "think": "\n".join(texts)}


def tool_call(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "custom_tool_call":
        name, arguments = item.get("name"), item.get("input")
    elif kind == "local_shell_call":
        name, arguments = "local_shell", json.dumps(item.get("action"), ensure_ascii=False)
    else:
        name, arguments = item.get("name"), item.get("arguments")
    return {
        "id": call_id(item),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


@dataclass(frozen=True)
class Mapped:
    messages: list[Message]
    # Per message: the index in the history of its first item (for a synthetic
    # output, the index just after its call): kept items start there.
    starts: tuple[int, ...]
    # History items before the first message: the agent's prefix.
    prefix: int


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.starts: list[int] = []
        self.assistant: dict[str, Any] | None = None

    def flush(self) -> None:
        if self.assistant is not None:
            self.messages.append(Message(self.assistant))
            self.assistant = None

    def add(self, start: int, data: dict[str, Any]) -> None:
        self.flush()
        self.starts.append(start)
        self.messages.append(Message(data))

    def assistant_part(self, start: int) -> dict[str, Any]:
        if self.assistant is None:
            self.starts.append(start)
            self.assistant = {"role": "assistant", "content": []}
        return self.assistant


def map_history(items: tuple[HistoryItem, ...]) -> Mapped:
    """The messages Codex's history stands for, with their item positions."""
    sent = as_sent(items)
    unsent = [(i, h) for i, h in enumerate(items) if h.unsent]
    if unsent:  # each at its place: before the first sent item read after it
        sent = sorted(sent + unsent, key=lambda p: p[0])  # stable: a call keeps its output
    first = next((k for k, (_, h) in enumerate(sent) if not is_context_message(h.item)), len(sent))
    prefix = sent[first][0] if first < len(sent) else len(items)
    b = _Builder()
    for index, h in sent[first:]:
        item = h.item
        kind = item.get("type")
        start = index + 1 if h.synthetic else index
        data: dict[str, Any]
        if kind == "message" and item.get("role") != "assistant":
            if is_context_message(item):
                data = {"role": "system", "content": _content(item)}
                data["codex"] = {"role": item.get("role")}
            else:
                data = {"role": "user", "content": _content(item)}
                if is_codex_summary(item):
                    data["codex"] = {"summary": True}
                elif h.unsent:
                    data["codex"] = {"unsent": True}
            b.add(start, data)
        elif kind in OUTPUT_TYPES:
            data = {
                "role": "tool",
                "content": _output_parts(item.get("output")),
                "tool_call_id": call_id(item),
            }
            if h.synthetic:
                data["codex"] = {"synthetic": True}
            b.add(start, data)
        else:
            msg = b.assistant_part(start)
            if kind == "message":
                msg["content"].extend(_content(item))
            elif kind == "reasoning":
                msg["content"].append(_think(item))
            elif kind in CALL_TYPES:
                msg.setdefault("tool_calls", []).append(tool_call(item))
            else:
                msg["content"].append({"type": f"codex:{kind}"})
    b.flush()
    return Mapped(b.messages, tuple(b.starts), prefix)

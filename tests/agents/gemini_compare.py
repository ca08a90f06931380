"""Comparing what Gemini CLI sends with this tool's messages.

A request's ``contents`` and our messages become ``(role, items)`` lists: texts
(stripped of surrounding line ends, blank ones left out), calls ``(id, name, args)``
and results ``(id, name, text)``; our ``tool`` messages count as user content, as
Gemini sends them, and consecutive contents of one role are merged, as Gemini CLI
merges them. Within one model content texts come before calls (our assistant
message keeps its text parts and its tool calls apart). Gemini CLI's own prefix,
its ``<session_context>`` text first in the first content, is left out.
"""

from __future__ import annotations

import json
from typing import Any

from kimi_compact_tui.formats.gemini_cli.convert import response_text
from kimi_compact_tui.model import Message

PREFIX = "<session_context>"


def _text(value: str) -> list[tuple]:
    value = value.strip("\n")
    return [("text", value)] if value.strip() else []


def _merge(out: list[list], role: str, items: list[tuple]) -> None:
    if not items:
        return
    if out and out[-1][0] == role:
        out[-1][1].extend(items)
    else:
        out.append([role, list(items)])


def _ordered(role: str, items: list[tuple]) -> list[tuple]:
    if role != "model":
        return items
    return [i for i in items if i[0] == "text"] + [i for i in items if i[0] != "text"]


def sent(contents: list[dict[str, Any]]) -> list[tuple]:
    """Request contents as (role, items), the agent's prefix dropped."""
    out: list[list] = []
    for i, content in enumerate(contents):
        items: list[tuple] = []
        for part in content.get("parts") or []:
            if part.get("thought"):
                items.append(("thought",))
            elif "functionCall" in part:
                fc = part["functionCall"]
                items.append(("call", fc.get("id"), fc.get("name"), fc.get("args")))
            elif "functionResponse" in part:
                fr = part["functionResponse"]
                text = response_text(fr.get("response"))
                items.append(("result", fr.get("id"), fr.get("name"), text))
            elif isinstance(part.get("text"), str):
                if i == 0 and not items and part["text"].lstrip().startswith(PREFIX):
                    continue
                items += _text(part["text"])
            else:
                items.append(("other", sorted(part)))
        _merge(out, content["role"], _ordered(content["role"], items))
    return [(role, tuple(items)) for role, items in out]


def ours(messages: list[Message]) -> list[tuple]:
    """Our messages as Gemini CLI sends them."""
    out: list[list] = []
    for m in messages:
        if m.role == "tool":
            _merge(out, "user", [("result", m.tool_call_id, m.name, m.text())])
            continue
        role = "model" if m.role == "assistant" else m.role
        items = [i for t in m.text_parts() for i in _text(t)]
        for call in m.tool_calls:
            fn = call["function"]
            items.append(("call", call["id"], fn["name"], json.loads(fn["arguments"])))
        _merge(out, role, items)
    return [(role, tuple(items)) for role, items in out]


def split_request(body: dict[str, Any], prompt: str) -> tuple[list[dict], list[dict]]:
    """(the history, the new turn) of a resume request: the new turn is the last
    user content carrying ``prompt``."""
    contents = body["contents"]
    start = max(i for i, c in enumerate(contents) if prompt in json.dumps(c))
    return contents[:start], contents[start:]
